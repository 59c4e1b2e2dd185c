# Sourced by the service scripts: a background process known by its pid file.
# process_running PID_FILE; process_stop NAME PID_FILE (TERM, up to 30 s, then KILL);
# process_await NAME PID_FILE LOG SECONDS WHERE (until the script's own `healthy` answers; if the
# process exits first, the log's first error lines and its last lines).

process_running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

process_stop() {
  local name=$1 pid_file=$2 pid
  if process_running "$pid_file"; then
    pid=$(cat "$pid_file")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
    echo "$name stopped"
  else
    echo "$name not running"
  fi
  rm -f "$pid_file"
}

process_exited() {  # the log's first error lines (a stack trace's head), then its last lines
  local name=$1 log=$2
  echo "error: $name exited; its first errors and last lines, from $log:" >&2
  grep -m 5 -E "ERROR|FATAL|Exception:|already in use" "$log" >&2 || true
  echo "..." >&2
  tail -8 "$log" >&2
}

process_await() {
  local name=$1 pid_file=$2 log=$3 seconds=$4 where=$5
  for _ in $(seq 1 $((seconds * 2))); do
    if healthy; then echo "$name running on $where (pid $(cat "$pid_file"), logs $log)"; return 0; fi
    process_running "$pid_file" || { process_exited "$name" "$log"; exit 1; }
    sleep 0.5
  done
  echo "error: $name did not answer on $where in $seconds s; see $log" >&2
  exit 1
}
