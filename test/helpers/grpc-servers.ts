import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import type { KeyPair } from './test-ca.js';

/** The service the test servers offer (package outpost.test). */
export const USERS_PROTO = `syntax = "proto3";
package outpost.test;

message GetUserRequest {
  string id = 1;
  int32 size = 2;
}

message User {
  string id = 1;
  string name = 2;
  int64 visits = 3;
  repeated string tags = 4;
  bytes blob = 5;
}

service Users {
  rpc GetUser (GetUserRequest) returns (User);
  rpc Slow (GetUserRequest) returns (User);
  rpc Big (GetUserRequest) returns (User);
  rpc Watch (GetUserRequest) returns (stream User);
}
`;

/** The standard health service (grpc/health/v1/health.proto). */
export const HEALTH_PROTO = `syntax = "proto3";
package grpc.health.v1;
message HealthCheckRequest { string service = 1; }
message HealthCheckResponse {
  enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; }
  ServingStatus status = 1;
}
service Health {
  rpc Check(HealthCheckRequest) returns (HealthCheckResponse);
}
`;

/** Options of {@link startGrpcServer}. */
export type GrpcServerOptions = {
  /** Serve TLS with this key and certificate; default plaintext. */
  tls?: KeyPair;
  /**
   * Offer server reflection (@grpc/reflection) of the users service: true both protocols, `v1alpha` only the
   * older one (as servers built before grpc.reflection.v1 do). Default none.
   */
  reflection?: boolean | 'v1alpha';
  /** Serving status by service name for the health service ('' the server); unknown names answer NOT_FOUND. */
  health?: Record<string, 'SERVING' | 'NOT_SERVING' | 'UNKNOWN'>;
  /** How long `Slow` takes, ms. Default 3000. */
  slowMs?: number;
};

/** A gRPC server on 127.0.0.1 started by a test. */
export type TestGrpcServer = {
  port: number;
  /** Metadata of the calls received, in order (keys lower case, first values). */
  received: Record<string, string>[];
  close(): Promise<void>;
};

/**
 * Starts a real @grpc/grpc-js server on 127.0.0.1 (a port of the kernel's choosing) offering
 * `outpost.test.Users` (GetUser: user "42" is Ada, any other id NOT_FOUND; Slow: answers after
 * `slowMs`; Big: a user whose `blob` is `size` bytes), the health service, and optionally reflection.
 * Every answer carries the response header `x-served-by: outpost-test` and echoes `x-echo`.
 */
export async function startGrpcServer(options: GrpcServerOptions = {}): Promise<TestGrpcServer> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-grpc-'));
  writeFileSync(join(dir, 'users.proto'), USERS_PROTO);
  writeFileSync(join(dir, 'health.proto'), HEALTH_PROTO);
  const loaderOptions = { keepCase: true, longs: String, enums: String, defaults: true };
  const users = protoLoader.loadSync(join(dir, 'users.proto'), loaderOptions);
  const health = protoLoader.loadSync(join(dir, 'health.proto'), loaderOptions);
  rmSync(dir, { recursive: true, force: true });
  const usersService = (grpc.loadPackageDefinition(users) as any).outpost.test.Users.service;
  const healthService = (grpc.loadPackageDefinition(health) as any).grpc.health.v1.Health.service;
  const received: Record<string, string>[] = [];
  const slowMs = options.slowMs ?? 3000;

  const server = new grpc.Server();
  const served = (call: grpc.ServerUnaryCall<any, any>) => {
    const seen = call.metadata.getMap();
    received.push(Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, String(v)])));
    const headers = new grpc.Metadata();
    headers.set('x-served-by', 'outpost-test');
    const echo = call.metadata.get('x-echo')[0];
    if (echo !== undefined) headers.set('x-echo', String(echo));
    call.sendMetadata(headers);
  };
  server.addService(usersService, {
    GetUser(call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) {
      served(call);
      if (call.request.id !== '42') {
        callback({ code: grpc.status.NOT_FOUND, details: `no user ${call.request.id}` });
        return;
      }
      callback(null, { id: '42', name: 'Ada', visits: '9007199254740993', tags: ['admin', 'ops'] });
    },
    Slow(call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) {
      served(call);
      const timer = setTimeout(() => callback(null, { id: call.request.id, name: 'late' }), slowMs);
      call.on('cancelled', () => clearTimeout(timer));
    },
    Big(call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) {
      served(call);
      callback(null, { id: 'big', name: 'x'.repeat(16), blob: Buffer.alloc(call.request.size, 0x61) });
    },
    Watch(call: grpc.ServerWritableStream<any, any>) {
      call.end();
    },
  });
  const statuses = options.health ?? { '': 'SERVING' };
  server.addService(healthService, {
    Check(call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) {
      const status = Object.hasOwn(statuses, call.request.service)
        ? statuses[call.request.service]
        : undefined;
      if (status === undefined) {
        callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${call.request.service}` });
        return;
      }
      callback(null, { status });
    },
  });
  if (options.reflection === 'v1alpha') {
    new ReflectionService(users).addToServer({
      addService: (service, implementation) => {
        const paths = Object.values(service).map((method) => method.path);
        if (paths.every((path) => path.startsWith('/grpc.reflection.v1alpha.')))
          server.addService(service, implementation);
      },
    });
  } else if (options.reflection) {
    new ReflectionService(users).addToServer(server);
  }
  const credentials = options.tls
    ? grpc.ServerCredentials.createSsl(null, [
        { private_key: Buffer.from(options.tls.key), cert_chain: Buffer.from(options.tls.cert) },
      ])
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return {
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000).unref();
      }),
  };
}
