//go:build integration
// +build integration

package checkly_test

// Outpost's own test of the SDK's gRPC monitor methods (CreateGRPCMonitor, GetGRPCMonitor,
// UpdateGRPCMonitor, DeleteGRPCMonitor), which the SDK's integration suite does not exercise. It is copied
// into the SDK's clone beside checkly_integration_test.go and uses its setupClient.

import (
	"context"
	"testing"

	checkly "github.com/checkly/checkly-go-sdk"
)

func TestOutpostGRPCMonitorCRUD(t *testing.T) {
	ctx := context.TODO()
	client := setupClient(t)

	pending := checkly.GRPCMonitor{
		Name:                 "gRPC monitor",
		Frequency:            10,
		Locations:            []string{"us-east-1"},
		DegradedResponseTime: 3000,
		MaxResponseTime:      5000,
		Request: checkly.GRPCRequest{
			URL:     "grpc.example.com",
			Port:    443,
			Timeout: 30,
			GRPCConfig: checkly.GRPCConfig{
				Mode:     "BEHAVIOR",
				TLS:      true,
				Method:   "/grpc.health.v1.Health/Check",
				Metadata: []checkly.GRPCMetadata{{Key: "x-team", Value: "checks"}},
			},
			Assertions: []checkly.Assertion{{Source: "GRPC_STATUS", Comparison: "EQUALS", Target: "0"}},
		},
	}
	created, err := client.CreateGRPCMonitor(ctx, pending)
	if err != nil {
		t.Fatalf("failed to create gRPC monitor: %v", err)
	}
	deleted := false
	defer func() {
		if !deleted {
			_ = client.DeleteGRPCMonitor(ctx, created.ID)
		}
	}()

	read, err := client.GetGRPCMonitor(ctx, created.ID)
	if err != nil {
		t.Fatalf("failed to get gRPC monitor: %v", err)
	}
	if read.Request.URL != "grpc.example.com" || read.Request.GRPCConfig.Method != "/grpc.health.v1.Health/Check" {
		t.Fatalf("wrong request after creation: %+v", read.Request)
	}
	if port, ok := read.Request.Port.(float64); !ok || port != 443 {
		t.Fatalf("wrong port after creation: %v", read.Request.Port)
	}
	if !read.Request.GRPCConfig.TLS || len(read.Request.GRPCConfig.Metadata) != 1 {
		t.Fatalf("wrong grpcConfig after creation: %+v", read.Request.GRPCConfig)
	}
	if len(read.Request.Assertions) != 1 || read.Request.Assertions[0].Source != "GRPC_STATUS" {
		t.Fatalf("wrong assertions after creation: %+v", read.Request.Assertions)
	}
	if read.DegradedResponseTime != 3000 || read.MaxResponseTime != 5000 {
		t.Fatalf("wrong response-time limits after creation: %d, %d", read.DegradedResponseTime, read.MaxResponseTime)
	}

	read.Name = "gRPC health monitor"
	read.Request.Port = "{{GRPC_PORT}}"
	read.Request.GRPCConfig = checkly.GRPCConfig{Mode: "HEALTH", Service: "outpost.test.Users"}
	updated, err := client.UpdateGRPCMonitor(ctx, created.ID, *read)
	if err != nil {
		t.Fatalf("failed to update gRPC monitor: %v", err)
	}
	if updated.Name != "gRPC health monitor" || updated.Request.GRPCConfig.Mode != "HEALTH" ||
		updated.Request.GRPCConfig.Service != "outpost.test.Users" || updated.Request.Port != "{{GRPC_PORT}}" {
		t.Fatalf("wrong monitor after update: %+v", updated)
	}

	if err := client.DeleteGRPCMonitor(ctx, created.ID); err != nil {
		t.Fatalf("failed to delete gRPC monitor: %v", err)
	}
	deleted = true
	if _, err := client.GetGRPCMonitor(ctx, created.ID); err == nil {
		t.Fatalf("the deleted gRPC monitor is still there")
	}
}
