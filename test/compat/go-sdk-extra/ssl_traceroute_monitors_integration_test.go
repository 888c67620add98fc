//go:build integration
// +build integration

package checkly_test

// Outpost's own tests of the SDK's SSL and traceroute monitor methods, built beside the SDK's integration
// suite (whose setupClient they use): create, get, update and delete, with the bodies the SDK marshals.

import (
	"context"
	"testing"

	checkly "github.com/checkly/checkly-go-sdk"
)

func TestOutpostSSLMonitorCRUD(t *testing.T) {
	ctx := context.TODO()
	client := setupClient(t)

	serverName := "www.example.com"
	enabled := true
	created, err := client.CreateSSLMonitor(ctx, checkly.SSLMonitor{
		Name:      "Outpost SSL monitor",
		Frequency: 10,
		Activated: false,
		Locations: []string{"us-east-1"},
		Request: checkly.SSLRequest{
			SSLConfig: checkly.SSLConfig{
				Hostname:              "example.com",
				Port:                  443,
				ServerName:            &serverName,
				IPFamily:              "IPv4",
				HandshakeTimeoutMs:    5000,
				AlertDaysBeforeExpiry: 30,
				SecurityBaseline: &checkly.SecurityBaseline{
					Enabled:       &enabled,
					MinTLSVersion: &checkly.SSLBaselineTLSRule{Value: "TLS1.2", Severity: "fail"},
				},
			},
			Assertions: []checkly.Assertion{
				{Source: checkly.Certificate, Property: "daysUntilExpiry", Comparison: checkly.GreaterThan, Target: "14"},
				{Source: checkly.Connection, Property: "tlsVersion", Comparison: checkly.Equals, Target: "TLSv1.3"},
			},
		},
	})
	if err != nil {
		t.Fatalf("failed to create SSL monitor: %v", err)
	}
	defer func() { _ = client.DeleteSSLMonitor(ctx, created.ID) }()

	read, err := client.GetSSLMonitor(ctx, created.ID)
	if err != nil {
		t.Fatalf("failed to get SSL monitor: %v", err)
	}
	config := read.Request.SSLConfig
	if config.Hostname != "example.com" || config.Port != 443 || config.HandshakeTimeoutMs != 5000 ||
		config.AlertDaysBeforeExpiry != 30 || config.ServerName == nil || *config.ServerName != serverName {
		t.Fatalf("wrong sslConfig after creation: %+v", config)
	}
	if config.SecurityBaseline == nil || config.SecurityBaseline.MinTLSVersion == nil ||
		config.SecurityBaseline.MinTLSVersion.Value != "TLS1.2" {
		t.Fatalf("wrong securityBaseline after creation: %+v", config.SecurityBaseline)
	}
	if len(read.Request.Assertions) != 2 || read.Request.Assertions[1].Source != checkly.Connection {
		t.Fatalf("wrong assertions after creation: %+v", read.Request.Assertions)
	}

	updated, err := client.UpdateSSLMonitor(ctx, created.ID, checkly.SSLMonitor{
		Name:      "Outpost SSL monitor 2",
		Frequency: 60,
		Locations: []string{"eu-west-1"},
		Request: checkly.SSLRequest{
			SSLConfig: checkly.SSLConfig{Hostname: "example.org", Port: 8443, SkipChainValidation: true},
		},
	})
	if err != nil {
		t.Fatalf("failed to update SSL monitor: %v", err)
	}
	if updated.Name != "Outpost SSL monitor 2" || updated.Frequency != 60 ||
		updated.Request.SSLConfig.Hostname != "example.org" || updated.Request.SSLConfig.Port != 8443 ||
		!updated.Request.SSLConfig.SkipChainValidation || updated.Locations[0] != "eu-west-1" {
		t.Fatalf("wrong SSL monitor after update: %+v", updated)
	}

	if err := client.DeleteSSLMonitor(ctx, created.ID); err != nil {
		t.Fatalf("failed to delete SSL monitor: %v", err)
	}
	if _, err := client.GetSSLMonitor(ctx, created.ID); err == nil {
		t.Fatalf("the SSL monitor is still there after delete")
	}
}

func TestOutpostTracerouteMonitorCRUD(t *testing.T) {
	ctx := context.TODO()
	client := setupClient(t)

	ptr := false
	created, err := client.CreateTracerouteMonitor(ctx, checkly.TracerouteMonitor{
		Name:      "Outpost traceroute monitor",
		Frequency: 10,
		Activated: false,
		Locations: []string{"us-east-1"},
		Request: checkly.TracerouteRequest{
			URL:            "traceroute.example.com",
			Protocol:       "ICMP",
			Port:           443,
			IPFamily:       "IPv4",
			MaxHops:        20,
			MaxUnknownHops: 5,
			PtrLookup:      &ptr,
			Timeout:        15,
			Assertions: []checkly.Assertion{
				{Source: "LATENCY", Property: "avg", Comparison: checkly.LessThan, Target: "200"},
				{Source: "HOP_COUNT", Comparison: checkly.LessThan, Target: "20"},
			},
		},
	})
	if err != nil {
		t.Fatalf("failed to create traceroute monitor: %v", err)
	}
	defer func() { _ = client.DeleteTracerouteMonitor(ctx, created.ID) }()

	read, err := client.GetTracerouteMonitor(ctx, created.ID)
	if err != nil {
		t.Fatalf("failed to get traceroute monitor: %v", err)
	}
	request := read.Request
	// The SDK drops port for ICMP probes.
	if request.URL != "traceroute.example.com" || request.Protocol != "ICMP" || request.Port != 0 ||
		request.MaxHops != 20 || request.MaxUnknownHops != 5 || request.Timeout != 15 ||
		request.PtrLookup == nil || *request.PtrLookup {
		t.Fatalf("wrong request after creation: %+v", request)
	}
	if len(request.Assertions) != 2 || request.Assertions[1].Source != "HOP_COUNT" {
		t.Fatalf("wrong assertions after creation: %+v", request.Assertions)
	}

	updated, err := client.UpdateTracerouteMonitor(ctx, created.ID, checkly.TracerouteMonitor{
		Name:      "Outpost traceroute monitor 2",
		Frequency: 5,
		Locations: []string{"eu-west-1"},
		Request:   checkly.TracerouteRequest{URL: "203.0.113.7", Protocol: "UDP", Port: 33434},
	})
	if err != nil {
		t.Fatalf("failed to update traceroute monitor: %v", err)
	}
	if updated.Name != "Outpost traceroute monitor 2" || updated.Request.URL != "203.0.113.7" ||
		updated.Request.Protocol != "UDP" || updated.Request.Port != 33434 || updated.Locations[0] != "eu-west-1" {
		t.Fatalf("wrong traceroute monitor after update: %+v", updated)
	}

	if err := client.DeleteTracerouteMonitor(ctx, created.ID); err != nil {
		t.Fatalf("failed to delete traceroute monitor: %v", err)
	}
	if _, err := client.GetTracerouteMonitor(ctx, created.ID); err == nil {
		t.Fatalf("the traceroute monitor is still there after delete")
	}
}
