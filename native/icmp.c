/*
 * outpost_icmp: ICMP echo sockets for Node.js (N-API + libuv), Linux only.
 *
 * Why our own addon and not the `raw-socket` npm package: raw-socket only opens
 * SOCK_RAW sockets, so it always needs CAP_NET_RAW, while Linux "ping sockets"
 * (SOCK_DGRAM + IPPROTO_ICMP/ICMPV6, allowed by net.ipv4.ping_group_range) need
 * no privilege at all. It also has no recvmsg with ancillary data: no IPv6 hop
 * limit (ICMPv6 raw sockets never hand out the IPv6 header) and no kernel receive
 * timestamps, so every RTT would include the JavaScript event loop's delay.
 *
 * What this file does, and nothing more:
 *  - open(family, preference, receiveType, onPacket): opens a datagram ICMP socket
 *    (unprivileged) or falls back to a raw one (CAP_NET_RAW); enables SO_TIMESTAMPNS
 *    and IP_RECVTTL / IPV6_RECVHOPLIMIT; polls it with uv_poll_t on Node's loop.
 *  - send(socket, address, type, identifier, sequence, payloadBytes): builds one
 *    ICMP echo message and sends it; returns the CLOCK_REALTIME time taken right
 *    before sendto (the clock of SO_TIMESTAMPNS), so RTT = kernel rx - tx.
 *  - receive(socket): reads what is queued now (see js_receive); close(socket).
 * Every received echo message of `receiveType` is handed to
 * onPacket(type, identifier, sequence, ttl, rxMs, sourceAddress, icmpBytes, code, destination).
 * Times are milliseconds since `epochSeconds` (an exported whole second of
 * CLOCK_REALTIME taken at load), small enough to keep nanosecond precision in a double.
 *
 * Route tracing (open's optional `flags`, send's optional `hopLimit`):
 *  - send(..., hopLimit) sets IP_TTL / IPV6_UNICAST_HOPS on the socket before sendto
 *    (a send without it puts the kernel default back).
 *  - OPEN_TRACE also hands over the ICMP errors that answer our own probes: Time Exceeded
 *    and Destination Unreachable, as onPacket(errorType, identifier, sequence, ttl, rxMs,
 *    routerAddress, icmpBytes, errorCode, originalDestination), where identifier and
 *    sequence are those of the probe the error quotes. Raw sockets get the errors as
 *    ordinary ICMP messages (the kernel filter then passes those two types too) and we parse
 *    the quoted IP header and echo request; datagram sockets get them on the error queue
 *    (IP_RECVERR / IPV6_RECVERR, read with MSG_ERRQUEUE): sock_extended_err tells type and
 *    code, SO_EE_OFFENDER the router, msg_name the original destination, and the queued
 *    data is the quoted echo request.
 *  - OPEN_UDP (with OPEN_TRACE) opens a UDP socket instead: probes are UDP datagrams sent to
 *    port `sequence` (type and identifier are ignored), errors come from its error queue (no
 *    privilege needed) with `identifier` our local port and `sequence` the probe's
 *    destination port, and a UDP datagram answering from that port is delivered with type -1.
 *  - libuv stops a uv_poll_t on POLLERR (which a non-empty error queue raises) and reports
 *    UV_EBADF; on_readable then drains both queues and starts polling again.
 *
 * Batches (open's flag OPEN_BATCH, for the pinger; not with OPEN_TRACE or OPEN_UDP):
 *  - open returns `records` too, a Float64Array of MAX_PACKETS_PER_WAKEUP records of
 *    RECORD_FIELDS numbers: identifier, sequence, ttl (-1 unknown), rxMs and the reply's source
 *    address as four 32-bit words (IPv4: its address, then zeros; IPv6: the 16 bytes, big endian).
 *    Each wakeup reads up to MAX_PACKETS_PER_WAKEUP echo replies with recvmmsg (only their
 *    headers: the payload is not looked at), fills the records and calls onPacket(count) once.
 *  - sendEchoes(socket, type, identifier, payloadBytes, addresses, sequences, count, txMs,
 *    errors, addressWords) sends `count` echo requests in one call, one sendto each so that each
 *    has its own CLOCK_REALTIME send time (txMs[i]); errors[i] is 0 or the errno of sendto, and
 *    addressWords[4i…4i+3] the destination as the records encode a source, to match replies by.
 *
 * Facts of the kernel this relies on:
 *  - Datagram ICMP sockets rewrite the echo identifier with the socket's local
 *    "port" and only deliver replies carrying it; we bind to port 0 and report
 *    the identifier the kernel chose (getsockname).
 *  - Raw IPv4 sockets deliver the IP header too; raw sockets receive every ICMP
 *    message of the host, so a kernel filter (ICMP_FILTER / ICMP6_FILTER) passes
 *    only `receiveType` and the caller matches the identifier. A raw batch or
 *    trace socket also gets an identifier of its own (random, returned by open)
 *    and a socket filter (classic BPF, as iputils ping installs) that drops, in
 *    the kernel, every echo message of another identifier and every error that
 *    does not quote one of our echo requests: the echo replies of another pinger on the
 *    host (a second agent, fping, smokeping) would otherwise fill its receive
 *    buffer whenever the event loop is busy, and the kernel would then drop our
 *    own replies, which the checks would report as packet loss. A socket filter
 *    runs on what the socket sees: an IPv4 raw socket's message starts with the IP
 *    header, an IPv6 raw socket's with the ICMPv6 header.
 *  - The kernel computes the ICMPv6 checksum (IPV6_CHECKSUM offset 2 is the default
 *    for ICMPv6) and the ICMP checksum of ping sockets; raw IPv4 needs ours.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <node_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <linux/errqueue.h>
#include <linux/filter.h>
#include <sys/random.h>

/* From <linux/icmp.h>, which cannot be included beside <net/if.h>. */
#ifndef ICMP_FILTER
#define ICMP_FILTER 1
#endif
struct icmp_filter {
  uint32_t data;
};

#define ICMP_HEADER_BYTES 8
#define MAX_PAYLOAD_BYTES 65000 /* below the 65507-byte datagram limit of IPv4 */
#define RECV_BUFFER_BYTES 65536
#define RECEIVE_BUFFER_BYTES (1 << 20) /* room for a burst of ~1000 replies to as many concurrent pings */
#define MAX_PACKETS_PER_WAKEUP 256 /* uv_poll is level triggered: the rest waits for the next turn */
#define BATCH_MESSAGES 64          /* messages per recvmmsg of a batch socket */
#define BATCH_DATA_BYTES 128       /* what a batch socket reads of a reply: IPv4 header (<= 60) and ICMP header */
#define BATCH_CONTROL_BYTES 128    /* SCM_TIMESTAMPNS and IP_TTL / IPV6_HOPLIMIT */
#define RECORD_FIELDS 8            /* identifier, sequence, ttl, rxMs, four address words */
#define MAX_BATCH_SENDS 1024       /* echo requests per sendEchoes call */

enum preference { PREFER_AUTO = 0, DATAGRAM_ONLY = 1, RAW_ONLY = 2 };
enum open_flags { OPEN_TRACE = 1, OPEN_UDP = 2, OPEN_BATCH = 4 };

/* ICMP types of the errors a trace socket passes (RFC 792, RFC 4443). */
#define ICMP4_DEST_UNREACH 3
#define ICMP4_TIME_EXCEEDED 11
#define ICMP4_ECHO_REQUEST 8
#define ICMP6_ECHO_REQUEST_TYPE 128
#define UDP_DATAGRAM_TYPE (-1) /* what a UDP answer is delivered as */
#define IPV4_HEADER_MIN_BYTES 20
#define IPV6_HEADER_BYTES 40

typedef struct icmp_socket {
  uv_poll_t poll; /* first member: uv callbacks cast back to icmp_socket */
  napi_env env;
  napi_ref callback;
  napi_ref resource;
  napi_async_context async;
  int fd;
  int family; /* AF_INET or AF_INET6 */
  int raw;    /* 1 for SOCK_RAW, 0 for SOCK_DGRAM */
  int receive_type;
  int trace;           /* OPEN_TRACE: ICMP errors answering our probes are delivered too */
  int udp;             /* OPEN_UDP: a UDP socket sending UDP probes */
  int identifier;      /* datagram and UDP sockets: the local port the kernel gave us; else -1 */
  int hop_limit;       /* the IP_TTL / IPV6_UNICAST_HOPS last set; -1 the kernel default */
  int closed;          /* shut(): no more polling, references released */
  int polling;         /* uv_poll_init succeeded: libuv owns the handle until on_handle_closed */
  int handle_released; /* the fd is closed and libuv no longer uses the handle */
  int finalized;       /* the JS wrapper is gone */
  int dispatching;     /* on_readable holds a callback scope on `async` */
  int batch;           /* OPEN_BATCH: echo replies go to `records`, many per onPacket call */
  napi_ref records_ref; /* batch: the ArrayBuffer behind `records`, held until shut() */
  double *records;      /* batch: MAX_PACKETS_PER_WAKEUP * RECORD_FIELDS numbers */
  uint8_t buffer[RECV_BUFFER_BYTES];
  /* Batch receive: the messages of one recvmmsg. */
  struct mmsghdr messages[BATCH_MESSAGES];
  struct iovec vectors[BATCH_MESSAGES];
  struct sockaddr_storage senders[BATCH_MESSAGES];
  uint8_t data[BATCH_MESSAGES][BATCH_DATA_BYTES];
  union {
    struct cmsghdr align;
    uint8_t bytes[BATCH_CONTROL_BYTES];
  } controls[BATCH_MESSAGES];
} icmp_socket;

static time_t epoch_seconds;

#define CHECK(call)                                     \
  do {                                                  \
    if ((call) != napi_ok) {                            \
      napi_throw_error(env, NULL, "N-API call failed"); \
      return NULL;                                      \
    }                                                   \
  } while (0)

static double ms_since_epoch(const struct timespec *ts) {
  return (double)(ts->tv_sec - epoch_seconds) * 1e3 + (double)ts->tv_nsec / 1e6;
}

static void throw_errno(napi_env env, int err, const char *what) {
  char message[256];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  napi_throw_error(env, uv_err_name(-err), message);
}

/* RFC 1071 Internet checksum. */
static uint16_t checksum(const uint8_t *data, size_t length) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < length; i += 2) sum += (uint32_t)(data[i] << 8 | data[i + 1]);
  if (length & 1) sum += (uint32_t)data[length - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return htons((uint16_t)~sum);
}

static int set_int_option(int fd, int level, int name, int value) {
  return setsockopt(fd, level, name, &value, sizeof value);
}

/* Socket options of every kind; returns 0 or an errno. */
static int configure(int fd, int family, int raw, int receive_type, int flags) {
  int trace = (flags & OPEN_TRACE) != 0; /* a UDP socket (OPEN_UDP) comes with it and needs nothing more */
  if (set_int_option(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1) != 0) return errno;
  /* Above net.core.rmem_max only with CAP_NET_ADMIN; otherwise the kernel caps it, which is fine. */
  if (set_int_option(fd, SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER_BYTES) != 0) {
    set_int_option(fd, SOL_SOCKET, SO_RCVBUF, RECEIVE_BUFFER_BYTES);
  }
  if (family == AF_INET) {
    if (set_int_option(fd, IPPROTO_IP, IP_RECVTTL, 1) != 0) return errno;
    if (raw) {
      uint32_t pass = 1U << receive_type;
      if (trace) pass |= 1U << ICMP4_DEST_UNREACH | 1U << ICMP4_TIME_EXCEEDED;
      struct icmp_filter filter = {.data = ~pass}; /* set bits are blocked */
      if (setsockopt(fd, SOL_RAW, ICMP_FILTER, &filter, sizeof filter) != 0) return errno;
    } else if (trace && set_int_option(fd, IPPROTO_IP, IP_RECVERR, 1) != 0) {
      return errno;
    }
  } else {
    if (set_int_option(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1) != 0) return errno;
    if (raw) {
      struct icmp6_filter filter;
      ICMP6_FILTER_SETBLOCKALL(&filter);
      ICMP6_FILTER_SETPASS(receive_type, &filter);
      if (trace) {
        ICMP6_FILTER_SETPASS(ICMP6_DST_UNREACH, &filter);
        ICMP6_FILTER_SETPASS(ICMP6_TIME_EXCEEDED, &filter);
      }
      if (setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter) != 0) return errno;
    } else if (trace && set_int_option(fd, IPPROTO_IPV6, IPV6_RECVERR, 1) != 0) {
      return errno;
    }
  }
  int file_flags = fcntl(fd, F_GETFL);
  if (file_flags < 0 || fcntl(fd, F_SETFL, file_flags | O_NONBLOCK) != 0) return errno;
  return 0;
}

/* A random echo identifier for a raw socket (the kernel gives datagram sockets theirs). */
static int random_identifier(void) {
  uint16_t value = 0;
  if (getrandom(&value, sizeof value, GRND_NONBLOCK) != (ssize_t)sizeof value) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    value = (uint16_t)(getpid() ^ now.tv_nsec);
  }
  return value;
}

/*
 * Keeps only what is ours on a raw socket (see the top of this file), with a classic BPF program: echo
 * messages of type `receive_type` carrying `identifier`, and the Time Exceeded and Destination Unreachable
 * errors quoting an echo request that carries it. One program serves the pinger and the tracer: the
 * kernel's ICMP_FILTER / ICMP6_FILTER (configure) runs first and passes those errors only to a trace socket. An IPv4 raw socket's message
 * starts with the IP header (its length found with BPF_MSH, the quoted one's computed), an IPv6 one's
 * with the ICMPv6 header; a quoted IPv6 probe with extension headers is not ours (we send none), as
 * parse_quoted_probe says too. A load past the end of a message drops it. Returns 0 or an errno.
 */
static int filter_identifier(int fd, int family, int receive_type, int identifier) {
  const uint32_t type = (uint32_t)receive_type, id = (uint32_t)identifier;
  /* Jumps are relative: the next instruction is 0. The last two are ACCEPT and DROP. */
  struct sock_filter ipv4[] = {
      BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),                      /* 0: X = the IP header's length */
      BPF_STMT(BPF_LD | BPF_B | BPF_IND, 0),                       /* 1: A = ICMP type */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, type, 0, 2),             /* 2: an echo message? else 5 */
      BPF_STMT(BPF_LD | BPF_H | BPF_IND, 4),                       /* 3: A = its identifier */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, id, 16, 17),             /* 4: ACCEPT or DROP */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ICMP4_DEST_UNREACH, 1, 0), /* 5: an error? */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ICMP4_TIME_EXCEEDED, 0, 15), /* 6: else DROP */
      BPF_STMT(BPF_LD | BPF_B | BPF_IND, 8),                       /* 7: the quoted IP header's first byte */
      BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),                   /* 8 */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x40, 0, 12),            /* 9: IPv4, else DROP */
      BPF_STMT(BPF_LD | BPF_B | BPF_IND, 8 + 9),                   /* 10: its protocol */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_ICMP, 0, 10),    /* 11: ICMP, else DROP */
      BPF_STMT(BPF_LD | BPF_B | BPF_IND, 8),                       /* 12 */
      BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x0f),                   /* 13 */
      BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 2),                      /* 14: A = the quoted header's length */
      BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),                      /* 15 */
      BPF_STMT(BPF_MISC | BPF_TAX, 0),                             /* 16: X = where the quoted ICMP is, less 8 */
      BPF_STMT(BPF_LD | BPF_B | BPF_IND, 8),                       /* 17: its type */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ICMP4_ECHO_REQUEST, 0, 3), /* 18: an echo request, else DROP */
      BPF_STMT(BPF_LD | BPF_H | BPF_IND, 8 + 4),                   /* 19: its identifier */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, id, 0, 1),               /* 20: ACCEPT or DROP */
      BPF_STMT(BPF_RET | BPF_K, 0xffffffff),                       /* 21: ACCEPT the whole message */
      BPF_STMT(BPF_RET | BPF_K, 0),                                /* 22: DROP */
  };
  struct sock_filter ipv6[] = {
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),                       /* 0: A = ICMPv6 type */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, type, 0, 2),             /* 1: an echo message? else 4 */
      BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 4),                       /* 2: A = its identifier */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, id, 11, 12),             /* 3: ACCEPT or DROP */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ICMP6_DST_UNREACH, 1, 0),   /* 4: an error? */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ICMP6_TIME_EXCEEDED, 0, 10), /* 5: else DROP */
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 8),                       /* 6: the quoted IPv6 header's first byte */
      BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),                   /* 7 */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x60, 0, 7),             /* 8: IPv6, else DROP */
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 8 + 6),                   /* 9: its next header */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_ICMPV6, 0, 5),   /* 10: ICMPv6, else DROP */
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 8 + 40),                  /* 11: the quoted ICMPv6 type */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ICMP6_ECHO_REQUEST_TYPE, 0, 3), /* 12: an echo request, else DROP */
      BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 8 + 40 + 4),              /* 13: its identifier */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, id, 0, 1),               /* 14: ACCEPT or DROP */
      BPF_STMT(BPF_RET | BPF_K, 0xffffffff),                       /* 15: ACCEPT */
      BPF_STMT(BPF_RET | BPF_K, 0),                                /* 16: DROP */
  };
  struct sock_fprog program = family == AF_INET
                                  ? (struct sock_fprog){.len = sizeof ipv4 / sizeof ipv4[0], .filter = ipv4}
                                  : (struct sock_fprog){.len = sizeof ipv6 / sizeof ipv6[0], .filter = ipv6};
  return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) == 0 ? 0 : errno;
}

/* The identifier the kernel gave a datagram socket: bind to "port" 0, read it back. */
static int bind_identifier(int fd, int family, int *identifier) {
  struct sockaddr_storage address;
  memset(&address, 0, sizeof address);
  socklen_t length = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
  address.ss_family = (sa_family_t)family;
  if (bind(fd, (struct sockaddr *)&address, length) != 0) return errno;
  if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return errno;
  *identifier = ntohs(family == AF_INET ? ((struct sockaddr_in *)&address)->sin_port
                                        : ((struct sockaddr_in6 *)&address)->sin6_port);
  return 0;
}

/* What one received message says, in the order onPacket takes it. */
typedef struct packet_info {
  int type;       /* echo reply type, the ICMP error's type, or UDP_DATAGRAM_TYPE */
  int code;       /* the ICMP code; 0 for replies */
  int identifier; /* of the probe answered */
  int sequence;   /* of the probe answered (a UDP probe: its destination port) */
  int ttl;        /* TTL / hop limit of the received packet; -1 unknown */
  size_t icmp_bytes;
  char source[INET6_ADDRSTRLEN];      /* who sent it: the target, or the router of an ICMP error */
  char destination[INET6_ADDRSTRLEN]; /* where the probe answered was sent */
} packet_info;

static void address_text(const void *address, char *out) {
  struct sockaddr_storage copy; /* cmsg data need not be aligned for sockaddr_in6 */
  memcpy(&copy, address, sizeof(struct sockaddr_in6));
  out[0] = '\0';
  if (copy.ss_family == AF_INET) {
    inet_ntop(AF_INET, &((struct sockaddr_in *)&copy)->sin_addr, out, INET6_ADDRSTRLEN);
  } else if (copy.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&copy)->sin6_addr, out, INET6_ADDRSTRLEN);
  }
}

static int port_of(const struct sockaddr_storage *address) {
  return ntohs(address->ss_family == AF_INET ? ((const struct sockaddr_in *)address)->sin_port
                                              : ((const struct sockaddr_in6 *)address)->sin6_port);
}

/* The echo request quoted by an ICMP error, starting at its IP header (RFC 792: the header
 * and at least 8 bytes of its data; RFC 4443: as much as fits). Returns 1 when it is ours to
 * look at: an ICMP echo request; fills identifier, sequence and destination. */
static int parse_quoted_probe(int family, const uint8_t *ip, size_t length, packet_info *p) {
  const uint8_t *icmp;
  if (family == AF_INET) {
    if (length < IPV4_HEADER_MIN_BYTES || ip[0] >> 4 != 4 || ip[9] != IPPROTO_ICMP) return 0;
    size_t header = (size_t)(ip[0] & 0x0f) * 4;
    if (header < IPV4_HEADER_MIN_BYTES || length < header + ICMP_HEADER_BYTES) return 0;
    icmp = ip + header;
    if (icmp[0] != ICMP4_ECHO_REQUEST) return 0;
    inet_ntop(AF_INET, ip + 16, p->destination, sizeof p->destination);
  } else {
    /* Extension headers before ICMPv6 are not followed: we never send any. */
    if (length < IPV6_HEADER_BYTES + ICMP_HEADER_BYTES || ip[0] >> 4 != 6 || ip[6] != IPPROTO_ICMPV6) return 0;
    icmp = ip + IPV6_HEADER_BYTES;
    if (icmp[0] != ICMP6_ECHO_REQUEST_TYPE) return 0;
    inet_ntop(AF_INET6, ip + 24, p->destination, sizeof p->destination);
  }
  p->identifier = icmp[4] << 8 | icmp[5];
  p->sequence = icmp[6] << 8 | icmp[7];
  return 1;
}

/* Parses an ICMP message from the normal queue: an echo message of the wanted type or, on a
 * raw trace socket, an error quoting an echo request. Returns 1 when it is to be delivered;
 * `p->source` must already hold the sender. */
static int parse_icmp(const icmp_socket *s, const uint8_t *data, size_t length, packet_info *p) {
  if (s->family == AF_INET && s->raw) {
    if (length < IPV4_HEADER_MIN_BYTES) return 0;
    size_t header = (size_t)(data[0] & 0x0f) * 4;
    if (header < IPV4_HEADER_MIN_BYTES || length < header) return 0;
    if (p->ttl < 0) p->ttl = data[8];
    data += header;
    length -= header;
  }
  if (length < ICMP_HEADER_BYTES) return 0;
  p->type = data[0];
  p->code = data[1];
  p->icmp_bytes = length;
  if (p->type == s->receive_type && p->code == 0) {
    p->identifier = data[4] << 8 | data[5];
    p->sequence = data[6] << 8 | data[7];
    memcpy(p->destination, p->source, sizeof p->destination);
    return 1;
  }
  if (!s->trace || !s->raw) return 0;
  int error = s->family == AF_INET ? p->type == ICMP4_DEST_UNREACH || p->type == ICMP4_TIME_EXCEEDED
                                   : p->type == ICMP6_DST_UNREACH || p->type == ICMP6_TIME_EXCEEDED;
  return error && parse_quoted_probe(s->family, data + ICMP_HEADER_BYTES, length - ICMP_HEADER_BYTES, p);
}

/* Hands one packet to JS; returns 0 when the callback threw (the exception stays pending). */
static int deliver(icmp_socket *s, napi_value callback, const packet_info *p, double rx_ms) {
  napi_env env = s->env;
  napi_value argv[9], global, result;
  napi_create_int32(env, p->type, &argv[0]);
  napi_create_int32(env, p->identifier, &argv[1]);
  napi_create_int32(env, p->sequence, &argv[2]);
  if (p->ttl >= 0) napi_create_int32(env, p->ttl, &argv[3]);
  else napi_get_null(env, &argv[3]);
  napi_create_double(env, rx_ms, &argv[4]);
  napi_create_string_utf8(env, p->source, NAPI_AUTO_LENGTH, &argv[5]);
  napi_create_uint32(env, (uint32_t)p->icmp_bytes, &argv[6]);
  napi_create_int32(env, p->code, &argv[7]);
  napi_create_string_utf8(env, p->destination, NAPI_AUTO_LENGTH, &argv[8]);
  napi_get_global(env, &global);
  return napi_call_function(env, global, callback, 9, argv, &result) == napi_ok;
}

/* Reads what the control messages say: kernel receive time, TTL, extended error. */
static void parse_control(struct msghdr *msg, struct timespec *rx, int *ttl, struct sock_extended_err *error,
                          int *have_error, char *offender) {
  int have_rx = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
        c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
      memcpy(rx, CMSG_DATA(c), sizeof *rx);
      have_rx = 1;
    } else if (((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) ||
                (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)) &&
               c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      memcpy(ttl, CMSG_DATA(c), sizeof *ttl);
    } else if (((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR) ||
                (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR)) &&
               c->cmsg_len >= CMSG_LEN(sizeof *error)) {
      memcpy(error, CMSG_DATA(c), sizeof *error);
      *have_error = 1;
      /* SO_EE_OFFENDER: the sender of the ICMP error, right after the struct. */
      if (c->cmsg_len >= CMSG_LEN(sizeof *error + sizeof(struct sockaddr_in6))) {
        address_text(CMSG_DATA(c) + sizeof *error, offender);
      } else if (c->cmsg_len >= CMSG_LEN(sizeof *error + sizeof(struct sockaddr_in))) {
        struct sockaddr_in in;
        memcpy(&in, CMSG_DATA(c) + sizeof *error, sizeof in);
        if (in.sin_family == AF_INET) inet_ntop(AF_INET, &in.sin_addr, offender, INET6_ADDRSTRLEN);
      }
    }
  }
  if (!have_rx) clock_gettime(CLOCK_REALTIME, rx); /* MSG_CTRUNC or an old kernel */
}

/* Reads one queue (at most MAX_PACKETS_PER_WAKEUP messages) and delivers what is ours.
 * Returns 0 when a callback threw. */
static int read_queue(icmp_socket *s, napi_value callback, int error_queue) {
  for (int n = 0; n < MAX_PACKETS_PER_WAKEUP && !s->closed; n++) {
    struct sockaddr_storage from;
    union {
      struct cmsghdr align;
      uint8_t bytes[512];
    } control;
    struct iovec iov = {.iov_base = s->buffer, .iov_len = sizeof s->buffer};
    struct msghdr msg = {.msg_name = &from,
                         .msg_namelen = sizeof from,
                         .msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control.bytes,
                         .msg_controllen = sizeof control.bytes};
    memset(&from, 0, sizeof from);
    ssize_t received = recvmsg(s->fd, &msg, MSG_DONTWAIT | (error_queue ? MSG_ERRQUEUE : 0));
    if (received < 0) {
      /* EAGAIN: drained. A trace socket's pending error (sk_err, set beside each queued ICMP
       * error) fails one recvmsg of the normal queue and is cleared by it: read on. */
      if (error_queue || !s->trace || errno == EAGAIN || errno == EWOULDBLOCK) break;
      continue;
    }

    packet_info p = {.ttl = -1, .source = "", .destination = ""};
    struct timespec rx = {0, 0};
    struct sock_extended_err error;
    int have_error = 0;
    char offender[INET6_ADDRSTRLEN] = "";
    parse_control(&msg, &rx, &p.ttl, &error, &have_error, offender);

    if (error_queue) {
      /* Only ICMP errors; local ones (EMSGSIZE, …) answer no probe. */
      if (!have_error || (error.ee_origin != SO_EE_ORIGIN_ICMP && error.ee_origin != SO_EE_ORIGIN_ICMP6)) continue;
      p.type = error.ee_type;
      p.code = error.ee_code;
      p.icmp_bytes = (size_t)received;
      memcpy(p.source, offender, sizeof p.source);
      address_text(&from, p.destination); /* the kernel puts the probe's destination here */
      if (s->udp) {
        p.identifier = s->identifier;
        p.sequence = port_of(&from);
      } else {
        /* The queued data is the quoted echo request, from its ICMP header on. */
        int request = s->family == AF_INET ? ICMP4_ECHO_REQUEST : ICMP6_ECHO_REQUEST_TYPE;
        if (received < ICMP_HEADER_BYTES || s->buffer[0] != request) continue;
        p.identifier = s->buffer[4] << 8 | s->buffer[5];
        p.sequence = s->buffer[6] << 8 | s->buffer[7];
      }
    } else {
      address_text(&from, p.source);
      if (s->udp) {
        p.type = UDP_DATAGRAM_TYPE;
        p.identifier = s->identifier;
        p.sequence = port_of(&from);
        p.icmp_bytes = (size_t)received;
        memcpy(p.destination, p.source, sizeof p.destination);
      } else if (!parse_icmp(s, s->buffer, (size_t)received, &p)) {
        continue;
      }
    }
    if (!deliver(s, callback, &p, ms_since_epoch(&rx))) return 0;
  }
  return 1;
}

/* An address as four 32-bit words, as the records of a batch socket carry it: IPv4 its
 * address then zeros, IPv6 its 16 bytes big endian. Other families: all zero. */
static void address_words(const struct sockaddr_storage *address, double *out) {
  const uint8_t *bytes = NULL;
  int words = 0;
  if (address->ss_family == AF_INET) {
    bytes = (const uint8_t *)&((const struct sockaddr_in *)address)->sin_addr;
    words = 1;
  } else if (address->ss_family == AF_INET6) {
    bytes = (const uint8_t *)&((const struct sockaddr_in6 *)address)->sin6_addr;
    words = 4;
  }
  for (int i = 0; i < 4; i++) {
    out[i] = i < words ? (double)((uint32_t)bytes[4 * i] << 24 | (uint32_t)bytes[4 * i + 1] << 16 |
                                  (uint32_t)bytes[4 * i + 2] << 8 | (uint32_t)bytes[4 * i + 3])
                       : 0;
  }
}

/* A batch socket's read: up to MAX_PACKETS_PER_WAKEUP echo replies, BATCH_MESSAGES per
 * recvmmsg, only their first BATCH_DATA_BYTES (the headers we parse), written to `records`;
 * then one onPacket(count). What is not an echo reply of ours to parse is skipped. Returns 0
 * when the callback threw. */
static int read_batch(icmp_socket *s, napi_value callback) {
  /* The records' ArrayBuffer is ours (a strong reference) but JavaScript could still detach
   * it (transfer it away): then nothing is read. */
  napi_value buffer;
  bool detached = true;
  void *data = NULL;
  size_t bytes = 0;
  if (napi_get_reference_value(s->env, s->records_ref, &buffer) != napi_ok || buffer == NULL ||
      napi_is_detached_arraybuffer(s->env, buffer, &detached) != napi_ok || detached ||
      napi_get_arraybuffer_info(s->env, buffer, &data, &bytes) != napi_ok ||
      bytes < sizeof(double) * MAX_PACKETS_PER_WAKEUP * RECORD_FIELDS) {
    return 1;
  }
  s->records = data;
  int count = 0, read = 0; /* records filled; messages read, what bounds the wakeup */
  while (read + BATCH_MESSAGES <= MAX_PACKETS_PER_WAKEUP && !s->closed) {
    for (int i = 0; i < BATCH_MESSAGES; i++) {
      s->vectors[i] = (struct iovec){.iov_base = s->data[i], .iov_len = BATCH_DATA_BYTES};
      s->messages[i].msg_hdr = (struct msghdr){.msg_name = &s->senders[i],
                                               .msg_namelen = sizeof s->senders[i],
                                               .msg_iov = &s->vectors[i],
                                               .msg_iovlen = 1,
                                               .msg_control = s->controls[i].bytes,
                                               .msg_controllen = sizeof s->controls[i].bytes};
      s->messages[i].msg_len = 0;
      s->senders[i].ss_family = AF_UNSPEC;
    }
    int received = recvmmsg(s->fd, s->messages, BATCH_MESSAGES, MSG_DONTWAIT, NULL);
    if (received <= 0) break; /* EAGAIN: drained */
    read += received;
    for (int i = 0; i < received; i++) {
      packet_info p = {.ttl = -1, .source = "", .destination = ""};
      struct timespec rx = {0, 0};
      struct sock_extended_err error;
      int have_error = 0;
      char offender[INET6_ADDRSTRLEN] = "";
      size_t length = s->messages[i].msg_len < BATCH_DATA_BYTES ? s->messages[i].msg_len : BATCH_DATA_BYTES;
      parse_control(&s->messages[i].msg_hdr, &rx, &p.ttl, &error, &have_error, offender);
      if (!parse_icmp(s, s->data[i], length, &p)) continue;
      double *record = s->records + (size_t)count * RECORD_FIELDS;
      record[0] = p.identifier;
      record[1] = p.sequence;
      record[2] = p.ttl;
      record[3] = ms_since_epoch(&rx);
      address_words(&s->senders[i], record + 4);
      count++;
    }
    if (received < BATCH_MESSAGES) break; /* the queue is empty */
  }
  if (count == 0 || s->closed) return 1;
  napi_value argv[1], global, result;
  napi_create_int32(s->env, count, &argv[0]);
  napi_get_global(s->env, &global);
  return napi_call_function(s->env, global, callback, 1, argv, &result) == napi_ok;
}

/* Reads every queued packet and delivers what is ours: the error queue first, as a pending
 * socket error fails reads of the normal queue. Returns 0 when a callback threw. */
static int read_queued(icmp_socket *s) {
  napi_value callback;
  if (napi_get_reference_value(s->env, s->callback, &callback) != napi_ok) return 1;
  if (s->batch) return read_batch(s, callback);
  if (s->trace && !s->raw && !read_queue(s, callback, 1)) return 0;
  return read_queue(s, callback, 0);
}

/* libuv: the socket is readable. */
static void on_readable(uv_poll_t *handle, int status, int events) {
  icmp_socket *s = (icmp_socket *)handle;
  (void)events;
  if (s->closed) return;
  /* A queued ICMP error raises POLLERR, on which libuv stops the handle and says UV_EBADF. */
  int restart = status < 0 && s->trace && !s->raw;
  if (status < 0 && !restart) return;
  napi_env env = s->env;
  napi_handle_scope handle_scope;
  napi_callback_scope callback_scope;
  napi_value resource;
  if (napi_open_handle_scope(env, &handle_scope) != napi_ok) return;
  napi_get_reference_value(env, s->resource, &resource);
  /* One callback scope for the whole batch: microtasks run once, after it. */
  napi_open_callback_scope(env, resource, s->async, &callback_scope);
  s->dispatching = 1;
  if (!read_queued(s)) {
    napi_value error;
    napi_get_and_clear_last_exception(env, &error);
    napi_fatal_exception(env, error); /* the JS side never throws here; if it did, surface it */
  }
  /* Closing the scope runs microtasks: promise continuations may close the socket too. */
  napi_close_callback_scope(env, callback_scope);
  s->dispatching = 0;
  /* Closed meanwhile: shut() left the async context to us, the scope being open on it. */
  if (s->closed) napi_async_destroy(env, s->async);
  else if (restart) uv_poll_start(&s->poll, UV_READABLE, on_readable); /* the queues are drained */
  napi_close_handle_scope(env, handle_scope);
}

/* The memory goes once both libuv and the JS wrapper are done with it. */
static void release(icmp_socket *s) {
  if (s->handle_released && s->finalized) free(s);
}

static void on_handle_closed(uv_handle_t *handle) {
  icmp_socket *s = (icmp_socket *)handle;
  close(s->fd);
  s->handle_released = 1;
  release(s);
}

/* Stops polling and closes the socket; idempotent. */
static void shut(icmp_socket *s) {
  if (s->closed) return;
  s->closed = 1;
  napi_delete_reference(s->env, s->callback);
  napi_delete_reference(s->env, s->resource);
  if (s->records_ref != NULL) napi_delete_reference(s->env, s->records_ref);
  s->records = NULL;
  if (!s->dispatching) napi_async_destroy(s->env, s->async);
  if (s->polling) {
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, on_handle_closed);
  } else {
    close(s->fd);
    s->handle_released = 1;
  }
}

static void cleanup_hook(void *data) { shut((icmp_socket *)data); }

static void finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  icmp_socket *s = data;
  if (!s->closed) {
    napi_remove_env_cleanup_hook(env, cleanup_hook, s);
    shut(s);
  }
  s->finalized = 1;
  release(s);
}

static icmp_socket *unwrap(napi_env env, napi_value value) {
  void *data = NULL;
  if (napi_unwrap(env, value, &data) != napi_ok || data == NULL) {
    napi_throw_type_error(env, NULL, "not an ICMP socket");
    return NULL;
  }
  icmp_socket *s = data;
  if (s->closed) {
    napi_throw_error(env, "ERR_SOCKET_CLOSED", "the ICMP socket is closed");
    return NULL;
  }
  return s;
}

/* open(family: 4 | 6, preference: 0 auto | 1 datagram | 2 raw, receiveType: number, onPacket: Function,
 *      flags?: OPEN_TRACE | OPEN_UDP | OPEN_BATCH)
 *   -> { socket: object, kind: 'datagram' | 'raw', identifier: number | null, records?: Float64Array }
 * `identifier`: a datagram or UDP socket's local port; a raw batch or trace socket's own, random (its filter
 * keeps only the replies and errors carrying it); null for a plain raw socket, which hears every message of
 * its type.
 * With OPEN_UDP (which needs OPEN_TRACE) preference and receiveType are ignored: the socket is a
 * UDP one (kind 'datagram'), its identifier the local port. OPEN_BATCH (alone) adds `records`
 * and calls onPacket(count) per wakeup (see the top of this file). */
static napi_value js_open(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t family_number = 0, preference = 0, receive_type = 0, flags = 0;
  napi_valuetype callback_type = napi_undefined, flags_type = napi_undefined;
  if (argc >= 5) CHECK(napi_typeof(env, argv[4], &flags_type));
  if (argc < 4 || napi_get_value_int32(env, argv[0], &family_number) != napi_ok ||
      (flags_type != napi_undefined && napi_get_value_int32(env, argv[4], &flags) != napi_ok) ||
      flags < 0 || flags > (OPEN_TRACE | OPEN_UDP | OPEN_BATCH) || (flags & (OPEN_TRACE | OPEN_UDP)) == OPEN_UDP ||
      ((flags & OPEN_BATCH) && flags != OPEN_BATCH) ||
      napi_get_value_int32(env, argv[1], &preference) != napi_ok ||
      napi_get_value_int32(env, argv[2], &receive_type) != napi_ok ||
      napi_typeof(env, argv[3], &callback_type) != napi_ok || callback_type != napi_function ||
      (family_number != 4 && family_number != 6) || preference < PREFER_AUTO || preference > RAW_ONLY ||
      receive_type < 0 || receive_type > 255 || (family_number == 4 && receive_type > 31)) {
    napi_throw_type_error(env, NULL,
                          "open(family 4|6, preference 0|1|2, receiveType, onPacket, flags 0, 1, 3 or 4 (batch alone))");
    return NULL;
  }
  int family = family_number == 4 ? AF_INET : AF_INET6;
  int udp = (flags & OPEN_UDP) != 0;
  int protocol = udp ? IPPROTO_UDP : family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;

  int fd = -1, raw = 0, identifier = -1, datagram_error = 0, raw_error = 0;
  if (udp) {
    fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, protocol);
    if (fd < 0) datagram_error = errno;
    else if ((datagram_error = configure(fd, family, 0, receive_type, flags)) != 0 ||
             (datagram_error = bind_identifier(fd, family, &identifier)) != 0) {
      close(fd);
      fd = -1;
    }
    if (fd < 0) {
      throw_errno(env, datagram_error, family == AF_INET ? "cannot open a UDP socket for IPv4"
                                                         : "cannot open a UDP socket for IPv6");
      return NULL;
    }
  }
  if (fd < 0 && preference != RAW_ONLY) {
    fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, protocol);
    if (fd < 0) datagram_error = errno;
    else if ((datagram_error = configure(fd, family, 0, receive_type, flags)) != 0 ||
             (datagram_error = bind_identifier(fd, family, &identifier)) != 0) {
      close(fd);
      fd = -1;
    }
  }
  if (fd < 0 && preference != DATAGRAM_ONLY) {
    fd = socket(family, SOCK_RAW | SOCK_CLOEXEC, protocol);
    if (fd < 0) raw_error = errno;
    else if ((raw_error = configure(fd, family, 1, receive_type, flags)) != 0) {
      close(fd);
      fd = -1;
    } else {
      raw = 1;
      /* The pinger's and the tracer's sockets send with their own identifier; a plain socket hears every
       * message of its type (a test's responder answers anyone's requests). Should a kernel or a sandboxed
       * runtime refuse the filter, the socket still works: the caller matches identifiers too, and foreign
       * messages are then read and dropped there. */
      if (flags & (OPEN_BATCH | OPEN_TRACE)) {
        identifier = random_identifier();
        (void)filter_identifier(fd, family, receive_type, identifier);
      }
    }
  }
  if (fd < 0) {
    char message[640];
    const char *name = family == AF_INET ? "IPv4" : "IPv6";
    int telling = datagram_error == EAFNOSUPPORT || raw_error == EAFNOSUPPORT ? EAFNOSUPPORT
                  : raw_error != 0                                            ? raw_error
                                                                              : datagram_error;
    snprintf(message, sizeof message,
             "cannot open an ICMP socket for %s (datagram: %s; raw: %s). Grant one of: "
             "unprivileged ping sockets with sysctl -w net.ipv4.ping_group_range=\"0 2147483647\", "
             "or CAP_NET_RAW (docker run --cap-add NET_RAW; Kubernetes securityContext.capabilities.add: [NET_RAW])",
             name, datagram_error ? strerror(datagram_error) : "not tried",
             raw_error ? strerror(raw_error) : "not tried");
    napi_throw_error(env, uv_err_name(-telling), message);
    return NULL;
  }

  icmp_socket *s = calloc(1, sizeof *s);
  if (s == NULL) {
    close(fd);
    napi_throw_error(env, "ENOMEM", "out of memory");
    return NULL;
  }
  s->env = env;
  s->fd = fd;
  s->family = family;
  s->raw = raw;
  s->receive_type = receive_type;
  s->trace = (flags & OPEN_TRACE) != 0;
  s->udp = udp;
  s->identifier = identifier;
  s->hop_limit = -1;
  s->batch = (flags & OPEN_BATCH) != 0;

  napi_value handle, resource_name, result, kind, id, records_buffer = NULL, records = NULL;
  uv_loop_t *loop = NULL;
  if (napi_create_object(env, &handle) != napi_ok || napi_wrap(env, handle, s, finalize, NULL, NULL) != napi_ok) {
    close(fd);
    free(s);
    napi_throw_error(env, NULL, "cannot wrap the ICMP socket");
    return NULL;
  }
  /* From here `finalize` owns `s`: errors below close it through shut(). */
  napi_create_string_utf8(env, "OUTPOST_ICMP", NAPI_AUTO_LENGTH, &resource_name);
  if (napi_create_reference(env, argv[3], 1, &s->callback) != napi_ok ||
      napi_create_reference(env, handle, 0, &s->resource) != napi_ok ||
      napi_async_init(env, handle, resource_name, &s->async) != napi_ok ||
      (s->batch && (napi_create_arraybuffer(env, sizeof(double) * MAX_PACKETS_PER_WAKEUP * RECORD_FIELDS,
                                            (void **)&s->records, &records_buffer) != napi_ok ||
                    napi_create_reference(env, records_buffer, 1, &s->records_ref) != napi_ok ||
                    napi_create_typedarray(env, napi_float64_array, MAX_PACKETS_PER_WAKEUP * RECORD_FIELDS,
                                           records_buffer, 0, &records) != napi_ok)) ||
      napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &s->poll, fd) != 0) {
    shut(s);
    napi_throw_error(env, NULL, "cannot attach the ICMP socket to the event loop");
    return NULL;
  }
  s->polling = 1;
  int status = uv_poll_start(&s->poll, UV_READABLE, on_readable);
  /* Pending pings keep the process alive through their JS timers, not the socket. */
  uv_unref((uv_handle_t *)&s->poll);
  napi_add_env_cleanup_hook(env, cleanup_hook, s);
  if (status != 0) {
    napi_remove_env_cleanup_hook(env, cleanup_hook, s);
    shut(s);
    throw_errno(env, -status, "uv_poll_start");
    return NULL;
  }

  CHECK(napi_create_object(env, &result));
  CHECK(napi_create_string_utf8(env, raw ? "raw" : "datagram", NAPI_AUTO_LENGTH, &kind));
  if (identifier >= 0) CHECK(napi_create_int32(env, identifier, &id));
  else CHECK(napi_get_null(env, &id));
  CHECK(napi_set_named_property(env, result, "socket", handle));
  CHECK(napi_set_named_property(env, result, "kind", kind));
  CHECK(napi_set_named_property(env, result, "identifier", id));
  if (records != NULL) CHECK(napi_set_named_property(env, result, "records", records));
  return result;
}

/* Parses a numeric address of the socket's family, with an optional %scope for IPv6. */
static int parse_address(int family, const char *text, struct sockaddr_storage *out, socklen_t *length) {
  memset(out, 0, sizeof *out);
  if (family == AF_INET) {
    struct sockaddr_in *a = (struct sockaddr_in *)out;
    a->sin_family = AF_INET;
    *length = sizeof *a;
    return inet_pton(AF_INET, text, &a->sin_addr) == 1;
  }
  struct sockaddr_in6 *a = (struct sockaddr_in6 *)out;
  char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
  snprintf(host, sizeof host, "%s", text);
  char *scope = strchr(host, '%');
  if (scope != NULL) {
    *scope++ = '\0';
    a->sin6_scope_id = if_nametoindex(scope);
    if (a->sin6_scope_id == 0) a->sin6_scope_id = (uint32_t)strtoul(scope, NULL, 10);
  }
  a->sin6_family = AF_INET6;
  *length = sizeof *a;
  return inet_pton(AF_INET6, host, &a->sin6_addr) == 1;
}

/* Sets the TTL / hop limit of the next datagrams; -1 puts the kernel default back. */
static int set_hop_limit(icmp_socket *s, int hop_limit) {
  if (hop_limit == s->hop_limit) return 0;
  int status = s->family == AF_INET ? set_int_option(s->fd, IPPROTO_IP, IP_TTL, hop_limit)
                                    : set_int_option(s->fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, hop_limit);
  if (status != 0) return errno;
  s->hop_limit = hop_limit;
  return 0;
}

/* send(socket, address, type, identifier, sequence, payloadBytes, hopLimit?) -> tx time, ms since
 * epochSeconds. A UDP socket sends `payloadBytes` to port `sequence` (1-65535), ignoring type and
 * identifier. `hopLimit` (1-255) is the TTL / hop limit of this datagram; without it the
 * kernel's default applies. */
static napi_value js_send(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 6) {
    napi_throw_type_error(env, NULL, "send(socket, address, type, identifier, sequence, payloadBytes, hopLimit?)");
    return NULL;
  }
  icmp_socket *s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  char text[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
  size_t text_length = 0;
  int32_t type = 0, identifier = 0, sequence = 0, payload = 0;
  if (napi_get_value_string_utf8(env, argv[1], text, sizeof text, &text_length) != napi_ok ||
      napi_get_value_int32(env, argv[2], &type) != napi_ok ||
      napi_get_value_int32(env, argv[3], &identifier) != napi_ok ||
      napi_get_value_int32(env, argv[4], &sequence) != napi_ok ||
      napi_get_value_int32(env, argv[5], &payload) != napi_ok || type < 0 || type > 255 || identifier < 0 ||
      identifier > 0xffff || sequence < 0 || sequence > 0xffff || payload < 0 || payload > MAX_PAYLOAD_BYTES) {
    napi_throw_range_error(env, NULL, "send: bad address, type, identifier, sequence (0-65535) or payload size");
    return NULL;
  }
  int32_t hop_limit = -1;
  napi_valuetype hop_limit_type = napi_undefined;
  if (argc >= 7) CHECK(napi_typeof(env, argv[6], &hop_limit_type));
  if (hop_limit_type != napi_undefined &&
      (napi_get_value_int32(env, argv[6], &hop_limit) != napi_ok || hop_limit < 1 || hop_limit > 255)) {
    napi_throw_range_error(env, NULL, "send: hopLimit must be 1-255");
    return NULL;
  }
  if (s->udp && sequence == 0) {
    napi_throw_range_error(env, NULL, "send: a UDP probe's port (sequence) must be 1-65535");
    return NULL;
  }
  struct sockaddr_storage to;
  socklen_t to_length;
  if (!parse_address(s->family, text, &to, &to_length)) {
    napi_throw_error(env, "EINVAL", "send: not a numeric address of the socket's family");
    return NULL;
  }
  int error = set_hop_limit(s, hop_limit);
  if (error != 0) {
    throw_errno(env, error, "setsockopt(IP_TTL / IPV6_UNICAST_HOPS)");
    return NULL;
  }
  if (s->trace && !s->raw) {
    /* Each ICMP error queued for an earlier probe also left a pending socket error, which
     * would fail this sendto (ECONNREFUSED, EHOSTUNREACH, …) instead of sending: reading
     * SO_ERROR clears it. The error itself waits on the error queue. */
    int pending = 0;
    socklen_t pending_length = sizeof pending;
    getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &pending, &pending_length);
  }

  /* The receive buffer is free between callbacks: build the message there. */
  uint8_t *packet = s->buffer;
  if (s->udp) {
    struct sockaddr_in *in = (struct sockaddr_in *)&to;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&to;
    if (s->family == AF_INET) in->sin_port = htons((uint16_t)sequence);
    else in6->sin6_port = htons((uint16_t)sequence);
    for (size_t i = 0; i < (size_t)payload; i++) packet[i] = (uint8_t)(0x40 + i % 32); /* as traceroute: @AB… */
    struct timespec tx;
    clock_gettime(CLOCK_REALTIME, &tx);
    if (sendto(s->fd, packet, (size_t)payload, 0, (struct sockaddr *)&to, to_length) < 0) {
      throw_errno(env, errno, "sendto");
      return NULL;
    }
    napi_value result;
    CHECK(napi_create_double(env, ms_since_epoch(&tx), &result));
    return result;
  }
  size_t length = ICMP_HEADER_BYTES + (size_t)payload;
  packet[0] = (uint8_t)type;
  packet[1] = 0;
  packet[2] = packet[3] = 0;
  packet[4] = (uint8_t)(identifier >> 8);
  packet[5] = (uint8_t)identifier;
  packet[6] = (uint8_t)(sequence >> 8);
  packet[7] = (uint8_t)sequence;
  for (size_t i = ICMP_HEADER_BYTES; i < length; i++) packet[i] = (uint8_t)(i - ICMP_HEADER_BYTES);
  if (s->family == AF_INET) {
    uint16_t sum = checksum(packet, length);
    memcpy(packet + 2, &sum, sizeof sum);
  }

  /* Before sendto: on loopback the reply can be received inside the sendto call itself. */
  struct timespec tx;
  clock_gettime(CLOCK_REALTIME, &tx);
  ssize_t sent = sendto(s->fd, packet, length, 0, (struct sockaddr *)&to, to_length);
  if (sent < 0) {
    throw_errno(env, errno, "sendto");
    return NULL;
  }
  napi_value result;
  CHECK(napi_create_double(env, ms_since_epoch(&tx), &result));
  return result;
}

/* The data and length of a typed array of `type`; 0 when `value` is not one. */
static int typed_array(napi_env env, napi_value value, napi_typedarray_type type, void **data, size_t *length) {
  napi_typedarray_type actual;
  napi_value buffer;
  size_t offset;
  bool is_typed_array = false;
  return napi_is_typedarray(env, value, &is_typed_array) == napi_ok && is_typed_array &&
         napi_get_typedarray_info(env, value, &actual, length, data, &buffer, &offset) == napi_ok && actual == type &&
         *data != NULL;
}

/* The four typed arrays of a sendEchoes call (argv[5], argv[7], argv[8], argv[9]), each long
 * enough for `count` requests; 0 when one is missing, of the wrong type or too short. */
typedef struct batch_arrays {
  int32_t *sequences;
  double *tx_ms;
  int32_t *errors;
  double *words;
} batch_arrays;

static int get_batch_arrays(napi_env env, napi_value *argv, size_t count, batch_arrays *a) {
  size_t sequences_length = 0, tx_length = 0, errors_length = 0, words_length = 0;
  return typed_array(env, argv[5], napi_int32_array, (void **)&a->sequences, &sequences_length) &&
         typed_array(env, argv[7], napi_float64_array, (void **)&a->tx_ms, &tx_length) &&
         typed_array(env, argv[8], napi_int32_array, (void **)&a->errors, &errors_length) &&
         typed_array(env, argv[9], napi_float64_array, (void **)&a->words, &words_length) &&
         sequences_length >= count && tx_length >= count && errors_length >= count && words_length >= 4 * count;
}

/* sendEchoes(socket, type, identifier, payloadBytes, addresses: string[], sequences: Int32Array,
 *            count, txMs: Float64Array, errors: Int32Array, addressWords: Float64Array) -> undefined
 * Sends `count` (1-MAX_BATCH_SENDS) echo requests, request i to addresses[i] with sequences[i]:
 * one sendto each, its CLOCK_REALTIME time taken right before into txMs[i], its errno (0 when
 * sent) into errors[i], and the destination's four address words (as a batch socket's records
 * carry a source) into addressWords[4i…4i+3]. A failed request does not stop the others; an
 * address that is not numeric fails with EINVAL. Every array must hold `count` requests. */
static napi_value js_send_echoes(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value argv[10];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 10) {
    napi_throw_type_error(env, NULL,
                          "sendEchoes(socket, type, identifier, payloadBytes, addresses, sequences, count, txMs, "
                          "errors, addressWords)");
    return NULL;
  }
  icmp_socket *s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  int32_t type = 0, identifier = 0, payload = 0, count = 0;
  uint32_t addresses_length = 0;
  bool is_array = false;
  batch_arrays arrays;
  if (s->udp || napi_get_value_int32(env, argv[1], &type) != napi_ok ||
      napi_get_value_int32(env, argv[2], &identifier) != napi_ok ||
      napi_get_value_int32(env, argv[3], &payload) != napi_ok ||
      napi_is_array(env, argv[4], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[4], &addresses_length) != napi_ok ||
      napi_get_value_int32(env, argv[6], &count) != napi_ok || type < 0 || type > 255 || identifier < 0 ||
      identifier > 0xffff || payload < 0 || payload > MAX_PAYLOAD_BYTES || count < 1 || count > MAX_BATCH_SENDS ||
      addresses_length < (uint32_t)count || !get_batch_arrays(env, argv, (size_t)count, &arrays)) {
    napi_throw_range_error(env, NULL,
                           "sendEchoes: bad type, identifier, payload size, count (1-1024) or arrays shorter than count "
                           "(not for UDP sockets)");
    return NULL;
  }
  int error = set_hop_limit(s, -1);
  if (error != 0) {
    throw_errno(env, error, "setsockopt(IP_TTL / IPV6_UNICAST_HOPS)");
    return NULL;
  }

  /* The receive buffer is free between callbacks: build the messages there. The payload is
   * written once (its bytes depend only on their position); the header for each message. */
  uint8_t *packet = s->buffer;
  size_t length = ICMP_HEADER_BYTES + (size_t)payload;
  for (size_t i = ICMP_HEADER_BYTES; i < length; i++) packet[i] = (uint8_t)(i - ICMP_HEADER_BYTES);

  char text[INET6_ADDRSTRLEN + IF_NAMESIZE + 2], parsed[sizeof text] = "";
  struct sockaddr_storage to;
  socklen_t to_length = 0;
  int have_to = 0; /* `to` holds the address `parsed` */
  for (int32_t i = 0; i < count; i++) {
    napi_value address;
    size_t text_length = 0;
    /* Reading an element may run JavaScript (a getter) that could detach or shrink the
     * typed arrays: their pointers are taken again after it. */
    if (napi_get_element(env, argv[4], (uint32_t)i, &address) != napi_ok ||
        !get_batch_arrays(env, argv, (size_t)count, &arrays)) {
      napi_throw_range_error(env, NULL, "sendEchoes: the arrays changed during the call");
      return NULL;
    }
    if (s->closed) {
      napi_throw_error(env, "ERR_SOCKET_CLOSED", "the ICMP socket is closed");
      return NULL;
    }
    int32_t *sequences = arrays.sequences, *errors = arrays.errors;
    double *tx_ms = arrays.tx_ms, *words = arrays.words;
    tx_ms[i] = 0;
    memset(words + 4 * (size_t)i, 0, 4 * sizeof(double));
    if (napi_get_value_string_utf8(env, address, text, sizeof text, &text_length) != napi_ok ||
        text_length >= sizeof text - 1 || sequences[i] < 0 || sequences[i] > 0xffff) {
      errors[i] = EINVAL; /* not a string, too long to be an address, or a bad sequence */
      continue;
    }
    /* Consecutive requests to one address parse it once. */
    if (!have_to || strcmp(parsed, text) != 0) {
      have_to = parse_address(s->family, text, &to, &to_length);
      if (!have_to) {
        errors[i] = EINVAL;
        continue;
      }
      memcpy(parsed, text, text_length + 1);
    }
    address_words(&to, words + 4 * (size_t)i);
    packet[0] = (uint8_t)type;
    packet[1] = 0;
    packet[2] = packet[3] = 0;
    packet[4] = (uint8_t)(identifier >> 8);
    packet[5] = (uint8_t)identifier;
    packet[6] = (uint8_t)(sequences[i] >> 8);
    packet[7] = (uint8_t)sequences[i];
    if (s->family == AF_INET) {
      uint16_t sum = checksum(packet, length);
      memcpy(packet + 2, &sum, sizeof sum);
    }
    /* Before sendto: on loopback the reply can be received inside the sendto call itself. */
    struct timespec tx;
    clock_gettime(CLOCK_REALTIME, &tx);
    tx_ms[i] = ms_since_epoch(&tx);
    errors[i] = sendto(s->fd, packet, length, 0, (struct sockaddr *)&to, to_length) < 0 ? errno : 0;
  }
  return NULL;
}

/* receive(socket): delivers the queued packets now, synchronously. A timer calls it before
 * declaring a packet lost: libuv runs timers before polling, so a reply that arrived in
 * time may still be queued when its timeout fires. */
static napi_value js_receive(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1) {
    napi_throw_type_error(env, NULL, "receive(socket)");
    return NULL;
  }
  icmp_socket *s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  read_queued(s); /* an exception thrown by the callback stays pending and reaches the caller */
  return NULL;
}

/* close(socket): idempotent. */
static napi_value js_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *data = NULL;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc == 1 && napi_unwrap(env, argv[0], &data) == napi_ok && data != NULL) {
    icmp_socket *s = data;
    if (!s->closed) {
      napi_remove_env_cleanup_hook(env, cleanup_hook, s);
      shut(s);
    }
  }
  return NULL;
}

/* now() -> CLOCK_REALTIME, ms since epochSeconds (for timeouts measured on the same clock). */
static napi_value js_now(napi_env env, napi_callback_info info) {
  (void)info;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  napi_value result;
  CHECK(napi_create_double(env, ms_since_epoch(&now), &result));
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (epoch_seconds == 0) epoch_seconds = now.tv_sec; /* once per process: worker threads share it */
  napi_value epoch;
  CHECK(napi_create_double(env, (double)epoch_seconds, &epoch));
  napi_property_descriptor properties[] = {
      {"open", NULL, js_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"send", NULL, js_send, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sendEchoes", NULL, js_send_echoes, NULL, NULL, NULL, napi_enumerable, NULL},
      {"receive", NULL, js_receive, NULL, NULL, NULL, napi_enumerable, NULL},
      {"close", NULL, js_close, NULL, NULL, NULL, napi_enumerable, NULL},
      {"now", NULL, js_now, NULL, NULL, NULL, napi_enumerable, NULL},
      {"epochSeconds", NULL, NULL, NULL, NULL, epoch, napi_enumerable, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
