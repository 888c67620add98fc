#!/bin/sh
# outpost-entrypoint: the agent image's entry point. It runs the command it is given (`node … cli.js
# agent`) as an unprivileged user that keeps only the capabilities the agent needs to run user code
# apart from itself (docs/security.md, "Privilege separation"):
#
#   CAP_SETUID, CAP_SETGID  switch each script, browser and suite to a uid of its own (setpriv);
#   CAP_KILL                kill every process of that uid when its run ends;
#   CAP_CHOWN               hand the run its private temp folder;
#   CAP_DAC_OVERRIDE,
#   CAP_FOWNER              read back and remove what the run wrote there.
#
# All six are in Docker's default set and allowed by the Kubernetes "baseline" Pod Security Standard.
# Every other capability leaves the bounding set, and user code gets none (no_new_privs, no ambient
# or inheritable capabilities). Started as root (the image has no USER line), it:
#   1. gives a world-writable /tmp the sticky bit (a Kubernetes emptyDir is 0777 without it), so runs
#      cannot remove or rename each other's temp folders;
#   2. moves API_KEY out of the environment into a pipe the agent reads once and closes
#      (API_KEY_FILE=/dev/fd/3): no process's environment holds the key;
#   3. execs the command as OUTPOST_AGENT_USER (a user name, default `node`, uid 1000; or a bare uid,
#      which needs no account) through setpriv.
# Started as any other user, it runs the command unchanged: the agent then says in its log and in
# /health that it cannot keep user code apart, and refuses it.
set -eu

if [ "$(id -u)" != 0 ]; then
  exec "$@"
fi

user="${OUTPOST_AGENT_USER:-node}"
caps='setuid,setgid,kill,chown,dac_override,fowner'
plus=$(printf '%s' "$caps" | sed 's/\([a-z_]*\)/+\1/g')

# Only a world-writable /tmp without the sticky bit is changed (a host's /tmp already has it).
find /tmp -maxdepth 0 -perm -0002 ! -perm -1000 -exec chmod +t {} + 2>/dev/null || true

if [ -n "${API_KEY:-}" ]; then
  # A here-document is a pipe in dash: the key never touches a file and leaves the environment.
  exec 3<<KEY
$API_KEY
KEY
  unset API_KEY
  export API_KEY_FILE=/dev/fd/3
fi

# A user name gets its groups from /etc/group; a bare uid (no account needed) gets none.
case "$user" in
  *[!0-9]*) groups=--init-groups ;;
  *) groups=--clear-groups ;;
esac

# NET_RAW stays in the bounding set when the container has it (Docker's default): tcpdump's file
# capability then still records the packet capture of a failed check. User code cannot use it:
# no_new_privs makes the kernel ignore file capabilities for every process of a run.
bounding="$plus"
bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)
if [ -n "$bnd" ] && [ $(( (0x$bnd >> 13) & 1 )) = 1 ]; then
  bounding="$bounding,+net_raw"
fi

exec setpriv --reuid="$user" --regid="$user" "$groups" \
  --inh-caps="-all,$plus" --ambient-caps="-all,$plus" --bounding-set="-all,$bounding" \
  -- "$@"
