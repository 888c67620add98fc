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
 * onPacket(type, identifier, sequence, ttl, rxMs, sourceAddress, icmpBytes).
 * Times are milliseconds since `epochSeconds` (an exported whole second of
 * CLOCK_REALTIME taken at load), small enough to keep nanosecond precision in a double.
 *
 * Facts of the kernel this relies on:
 *  - Datagram ICMP sockets rewrite the echo identifier with the socket's local
 *    "port" and only deliver replies carrying it; we bind to port 0 and report
 *    the identifier the kernel chose (getsockname).
 *  - Raw IPv4 sockets deliver the IP header too; raw sockets receive every ICMP
 *    message of the host, so a kernel filter (ICMP_FILTER / ICMP6_FILTER) passes
 *    only `receiveType` and the caller matches the identifier.
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

enum preference { PREFER_AUTO = 0, DATAGRAM_ONLY = 1, RAW_ONLY = 2 };

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
  int closed;          /* shut(): no more polling, references released */
  int polling;         /* uv_poll_init succeeded: libuv owns the handle until on_handle_closed */
  int handle_released; /* the fd is closed and libuv no longer uses the handle */
  int finalized;       /* the JS wrapper is gone */
  int dispatching;     /* on_readable holds a callback scope on `async` */
  uint8_t buffer[RECV_BUFFER_BYTES];
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

/* Socket options common to both kinds; returns 0 or an errno. */
static int configure(int fd, int family, int raw, int receive_type) {
  if (set_int_option(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1) != 0) return errno;
  /* Above net.core.rmem_max only with CAP_NET_ADMIN; otherwise the kernel caps it, which is fine. */
  if (set_int_option(fd, SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER_BYTES) != 0) {
    set_int_option(fd, SOL_SOCKET, SO_RCVBUF, RECEIVE_BUFFER_BYTES);
  }
  if (family == AF_INET) {
    if (set_int_option(fd, IPPROTO_IP, IP_RECVTTL, 1) != 0) return errno;
    if (raw) {
      struct icmp_filter filter = {.data = ~(1U << receive_type)}; /* set bits are blocked */
      if (setsockopt(fd, SOL_RAW, ICMP_FILTER, &filter, sizeof filter) != 0) return errno;
    }
  } else {
    if (set_int_option(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1) != 0) return errno;
    if (raw) {
      struct icmp6_filter filter;
      ICMP6_FILTER_SETBLOCKALL(&filter);
      ICMP6_FILTER_SETPASS(receive_type, &filter);
      if (setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter) != 0) return errno;
    }
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return errno;
  return 0;
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

/* Parses the ICMP message in `data`; returns 1 when it is an echo message of the wanted type. */
static int parse_echo(const icmp_socket *s, const uint8_t *data, size_t length, int *identifier, int *sequence,
                      int *ttl_from_header, size_t *icmp_bytes) {
  if (s->family == AF_INET && s->raw) {
    if (length < 20) return 0;
    size_t header = (size_t)(data[0] & 0x0f) * 4;
    if (header < 20 || length < header) return 0;
    *ttl_from_header = data[8];
    data += header;
    length -= header;
  }
  if (length < ICMP_HEADER_BYTES || data[0] != s->receive_type || data[1] != 0) return 0;
  *identifier = data[4] << 8 | data[5];
  *sequence = data[6] << 8 | data[7];
  *icmp_bytes = length;
  return 1;
}

/* Hands one packet to JS; returns 0 when the callback threw (the exception stays pending). */
static int deliver(icmp_socket *s, napi_value callback, int identifier, int sequence, int ttl, double rx_ms,
                   const char *from, size_t icmp_bytes) {
  napi_env env = s->env;
  napi_value argv[7], global, result;
  napi_create_int32(env, s->receive_type, &argv[0]);
  napi_create_int32(env, identifier, &argv[1]);
  napi_create_int32(env, sequence, &argv[2]);
  if (ttl >= 0) napi_create_int32(env, ttl, &argv[3]);
  else napi_get_null(env, &argv[3]);
  napi_create_double(env, rx_ms, &argv[4]);
  napi_create_string_utf8(env, from, NAPI_AUTO_LENGTH, &argv[5]);
  napi_create_uint32(env, (uint32_t)icmp_bytes, &argv[6]);
  napi_get_global(env, &global);
  return napi_call_function(env, global, callback, 7, argv, &result) == napi_ok;
}

/* Reads every queued packet (at most MAX_PACKETS_PER_WAKEUP) and delivers the echo messages.
 * Returns 0 when a callback threw. */
static int read_queued(icmp_socket *s) {
  napi_value callback;
  if (napi_get_reference_value(s->env, s->callback, &callback) != napi_ok) return 1;
  for (int n = 0; n < MAX_PACKETS_PER_WAKEUP && !s->closed; n++) {
    struct sockaddr_storage from;
    union {
      struct cmsghdr align;
      uint8_t bytes[256];
    } control;
    struct iovec iov = {.iov_base = s->buffer, .iov_len = sizeof s->buffer};
    struct msghdr msg = {.msg_name = &from,
                         .msg_namelen = sizeof from,
                         .msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control.bytes,
                         .msg_controllen = sizeof control.bytes};
    ssize_t received = recvmsg(s->fd, &msg, MSG_DONTWAIT);
    if (received < 0) break; /* EAGAIN: drained; other errors: nothing to read now */

    struct timespec rx = {0, 0};
    int ttl = -1, ttl_from_header = -1, have_rx = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
          c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
        memcpy(&rx, CMSG_DATA(c), sizeof rx);
        have_rx = 1;
      } else if (((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) ||
                  (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)) &&
                 c->cmsg_len >= CMSG_LEN(sizeof(int))) {
        memcpy(&ttl, CMSG_DATA(c), sizeof ttl);
      }
    }
    if (!have_rx) clock_gettime(CLOCK_REALTIME, &rx); /* MSG_CTRUNC or an old kernel */

    int identifier, sequence;
    size_t icmp_bytes;
    if (!parse_echo(s, s->buffer, (size_t)received, &identifier, &sequence, &ttl_from_header, &icmp_bytes)) continue;
    if (ttl < 0) ttl = ttl_from_header;

    char address[INET6_ADDRSTRLEN] = "";
    if (from.ss_family == AF_INET) {
      inet_ntop(AF_INET, &((struct sockaddr_in *)&from)->sin_addr, address, sizeof address);
    } else if (from.ss_family == AF_INET6) {
      inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&from)->sin6_addr, address, sizeof address);
    }
    if (!deliver(s, callback, identifier, sequence, ttl, ms_since_epoch(&rx), address, icmp_bytes)) return 0;
  }
  return 1;
}

/* libuv: the socket is readable. */
static void on_readable(uv_poll_t *handle, int status, int events) {
  icmp_socket *s = (icmp_socket *)handle;
  (void)events;
  if (s->closed || status < 0) return;
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

/* open(family: 4 | 6, preference: 0 auto | 1 datagram | 2 raw, receiveType: number, onPacket: Function)
 *   -> { socket: object, kind: 'datagram' | 'raw', identifier: number | null } */
static napi_value js_open(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t family_number = 0, preference = 0, receive_type = 0;
  napi_valuetype callback_type = napi_undefined;
  if (argc < 4 || napi_get_value_int32(env, argv[0], &family_number) != napi_ok ||
      napi_get_value_int32(env, argv[1], &preference) != napi_ok ||
      napi_get_value_int32(env, argv[2], &receive_type) != napi_ok ||
      napi_typeof(env, argv[3], &callback_type) != napi_ok || callback_type != napi_function ||
      (family_number != 4 && family_number != 6) || preference < PREFER_AUTO || preference > RAW_ONLY ||
      receive_type < 0 || receive_type > 255 || (family_number == 4 && receive_type > 31)) {
    napi_throw_type_error(env, NULL, "open(family 4|6, preference 0|1|2, receiveType, onPacket)");
    return NULL;
  }
  int family = family_number == 4 ? AF_INET : AF_INET6;
  int protocol = family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;

  int fd = -1, raw = 0, identifier = -1, datagram_error = 0, raw_error = 0;
  if (preference != RAW_ONLY) {
    fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, protocol);
    if (fd < 0) datagram_error = errno;
    else if ((datagram_error = configure(fd, family, 0, receive_type)) != 0 ||
             (datagram_error = bind_identifier(fd, family, &identifier)) != 0) {
      close(fd);
      fd = -1;
    }
  }
  if (fd < 0 && preference != DATAGRAM_ONLY) {
    fd = socket(family, SOCK_RAW | SOCK_CLOEXEC, protocol);
    if (fd < 0) raw_error = errno;
    else if ((raw_error = configure(fd, family, 1, receive_type)) != 0) {
      close(fd);
      fd = -1;
    } else {
      raw = 1;
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

  napi_value handle, resource_name, result, kind, id;
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

/* send(socket, address, type, identifier, sequence, payloadBytes) -> tx time, ms since epochSeconds */
static napi_value js_send(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 6) {
    napi_throw_type_error(env, NULL, "send(socket, address, type, identifier, sequence, payloadBytes)");
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
  struct sockaddr_storage to;
  socklen_t to_length;
  if (!parse_address(s->family, text, &to, &to_length)) {
    napi_throw_error(env, "EINVAL", "send: not a numeric address of the socket's family");
    return NULL;
  }

  /* The receive buffer is free between callbacks: build the message there. */
  uint8_t *packet = s->buffer;
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
      {"receive", NULL, js_receive, NULL, NULL, NULL, napi_enumerable, NULL},
      {"close", NULL, js_close, NULL, NULL, NULL, napi_enumerable, NULL},
      {"now", NULL, js_now, NULL, NULL, NULL, napi_enumerable, NULL},
      {"epochSeconds", NULL, NULL, NULL, NULL, epoch, napi_enumerable, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
