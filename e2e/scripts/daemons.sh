#!/usr/bin/env bash
# Background processes of the e2e scripts (control-plane.sh, cluster.sh), each recorded in a state
# directory. Source it after lib.sh, do not run it.
#
#   daemon_launch DIR NAME BIN ARGS...   run BIN in a new session (its own process group, no
#                                        terminal, stdin from /dev/null), output appended to
#                                        DIR/NAME.log, "PID BIN" in DIR/NAME.pid
#   daemon_pid DIR NAME                  print the PID when that process is alive and still runs
#                                        BIN (a reused PID is not ours); fail otherwise
#   daemon_recorded DIR NAME             print the PID recorded for NAME, alive or not (for
#                                        WAIT_FOR_PID)
#   daemon_stop DIR NAME [SECS]          SIGTERM (to its process group when it leads one), SECS
#                                        seconds (default 30), then SIGKILL; safe to repeat
#
#   daemon_state_dir ACTION DIR          set `dir` to DIR's absolute path; `start` creates DIR,
#                                        `stop` of a missing DIR exits 0 (nothing ran there), any
#                                        other action fails
#
# File descriptor 9 is closed in the daemons: the scripts hold their locks on it.

if [[ -n "${_OPBUILDER_DAEMONS_LOADED:-}" ]]; then
	return 0
fi
_OPBUILDER_DAEMONS_LOADED=1

daemon_launch() {
	local dir=$1 name=$2 bin=$3
	shift 3
	printf '\n==== %s start %s\n' "$name" "$(date -u +%FT%TZ)" >>"$dir/$name.log"
	setsid "$bin" "$@" </dev/null >>"$dir/$name.log" 2>&1 9>&- &
	printf '%s %s\n' "$!" "$bin" >"$dir/$name.pid"
}

daemon_pid() {
	local dir=$1 name=$2 pid bin argv0
	[[ -f "$dir/$name.pid" ]] || return 1
	read -r pid bin <"$dir/$name.pid" || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	# argv[0]: the command line up to its first NUL.
	IFS= read -r -d '' argv0 <"/proc/$pid/cmdline" 2>/dev/null || [[ -n ${argv0:-} ]] || return 1
	[[ -z $bin || $argv0 == "$bin" ]] || return 1
	printf '%s\n' "$pid"
}

daemon_recorded() {
	local pid _
	read -r pid _ <"$1/$2.pid" && printf '%s\n' "$pid"
}

daemon_stop() {
	local dir=$1 name=$2 timeout=${3:-30} pid pgid target deadline
	if ! pid=$(daemon_pid "$dir" "$name"); then
		rm -f "$dir/$name.pid"
		return 0
	fi
	pgid=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ') || pgid=""
	# Only signal the group when the process leads it (setsid makes it so): never a group we
	# might share with our caller.
	if [[ $pgid == "$pid" ]]; then target="-$pid"; else target="$pid"; fi
	log_info "stopping $name (pid $pid)"
	kill -TERM -- "$target" 2>/dev/null || true
	deadline=$((SECONDS + timeout))
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
		sleep 0.2
	done
	if kill -0 "$pid" 2>/dev/null; then
		log_warn "$name (pid $pid) ignored SIGTERM for ${timeout}s; sending SIGKILL"
		kill -KILL -- "$target" 2>/dev/null || true
		deadline=$((SECONDS + 10))
		while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
			sleep 0.2
		done
	fi
	rm -f "$dir/$name.pid"
}

daemon_state_dir() {
	local action=$1 path=$2
	[[ -n $path ]] || die "no state directory given"
	if [[ ! -d $path ]]; then
		case "$action" in
		start) mkdir -p "$path" ;;
		stop) exit 0 ;;
		*) die "no such directory: $path (nothing was started there: $0 start $path)" ;;
		esac
	fi
	dir=$(cd "$path" && pwd)
}
