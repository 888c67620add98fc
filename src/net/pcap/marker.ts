import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';

/**
 * A UDP datagram from 127.0.0.1:P to itself carrying a random token, sent once the capture is
 * otherwise done: tcpdump reads packets in the order they reached its socket, so once the
 * marker is in its output so is every packet before it, and stopping tcpdump (which discards
 * what it has not read) loses none of them under load. Its filter names its port at both ends;
 * the marker record is never written to the file.
 */
export class Marker {
  readonly #socket: Socket;
  readonly #token = randomBytes(16);
  readonly #port: number;
  #seen: (() => void) | null = null;
  #wasSeen = false;

  private constructor(socket: Socket, port: number) {
    this.#socket = socket;
    this.#port = port;
  }

  /** A marker on a new UDP socket bound to 127.0.0.1 (a port of the kernel's choice). */
  static async open(): Promise<Marker> {
    const socket = createSocket('udp4');
    socket.on('message', () => {});
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => resolve());
    });
    socket.unref();
    return new Marker(socket, socket.address().port);
  }

  /** The BPF filter of the marker's datagram: its port at both ends, on 127.0.0.1. */
  get filter(): string {
    return `udp and src host 127.0.0.1 and src port ${this.#port} and dst host 127.0.0.1 and dst port ${this.#port}`;
  }

  /** True for the marker's record; notes that tcpdump has read it. */
  isMarker(record: Buffer): boolean {
    if (!record.includes(this.#token)) return false;
    this.#wasSeen = true;
    this.#seen?.();
    return true;
  }

  /** Sends the marker and resolves once tcpdump wrote it, or after `timeoutMs` (never rejects). */
  passThrough(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      if (this.#wasSeen) return done();
      this.#seen = done;
      this.#socket.send(this.#token, this.#port, '127.0.0.1', (err) => {
        if (err) done();
      });
    });
  }

  /** Closes the marker's socket (once; later calls do nothing). */
  close(): void {
    try {
      this.#socket.close();
    } catch {
      // already closed
    }
  }
}
