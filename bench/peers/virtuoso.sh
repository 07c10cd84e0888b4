#!/usr/bin/env bash
# A private Virtuoso (Debian's virtuoso-opensource) for wukongd's benchmark.
#
#   virtuoso.sh start DATA.nt[.gz] RUNDIR   load (or reuse the cached load), start, print key=value lines
#   virtuoso.sh stop RUNDIR                 shut the instance down and remove RUNDIR
#
# The instance listens on 127.0.0.1 only (SQL port $VIRTUOSO_SQL_PORT, HTTP
# $VIRTUOSO_HTTP_PORT) with its own virtuoso.ini and database in RUNDIR. The
# loaded database is cached under $VIRTUOSO_CACHE (default var/bench/virtuoso
# in the repository) keyed by the data file's name and size, so the next run
# copies it instead of loading again. Loading uses the bulk loader
# (ld_dir + rdf_loader_run + checkpoint). If virtuoso-t is missing, it is
# installed with apt-get.
#
# `start` prints, one per line: load_seconds=, load_peak_rss_kb=, load_loadavg=,
# triples=, version= (of the load, cached or not), db_bytes=, cached=,
# start_seconds= (starting the server on the loaded database), pid=, endpoint=.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
SQL_PORT=${VIRTUOSO_SQL_PORT:-21111}
HTTP_PORT=${VIRTUOSO_HTTP_PORT:-28890}
CACHE=${VIRTUOSO_CACHE:-$repo/var/bench/virtuoso}
# Buffers of 8 KiB: 340000 ≈ 2.7 GB, far more than LUBM-40's database, so
# warm queries run from memory (Virtuoso's guide: ~2/3 of the RAM given to it).
BUFFERS=${VIRTUOSO_BUFFERS:-340000}
GRAPH=${VIRTUOSO_GRAPH:-http://wukongd.bench/lubm}

log() { echo "virtuoso.sh $(date +%T): $*" >&2; }

ensure_installed() {
	if command -v virtuoso-t >/dev/null && command -v isql-vt >/dev/null; then
		return
	fi
	log "installing virtuoso-opensource with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq virtuoso-opensource >&2
}

# write_ini DIR DATADIR
write_ini() {
	local dir=$1 datadir=$2
	cat >"$dir/virtuoso.ini" <<EOF
[Database]
DatabaseFile       = $dir/virtuoso.db
ErrorLogFile       = $dir/virtuoso.log
LockFile           = $dir/virtuoso.lck
TransactionFile    = $dir/virtuoso.trx
xa_persistent_file = $dir/virtuoso.pxa
ErrorLogLevel      = 7
FileExtend         = 200
MaxCheckpointRemap = 2000
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = $dir/virtuoso-temp.db
TransactionFile    = $dir/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping           = 0

[Parameters]
ServerPort               = 127.0.0.1:$SQL_PORT
LiteMode                 = 0
DisableUnixSocket        = 1
DisableTcpSocket         = 0
MaxClientConnections     = 72
CheckpointInterval       = 0
O_DIRECT                 = 0
CaseMode                 = 2
MaxStaticCursorRows      = 5000
CheckpointAuditTrail     = 0
AllowOSCalls             = 0
SchedulerInterval        = 10
DirsAllowed              = ., $datadir
ThreadCleanupInterval    = 0
ThreadThreshold          = 10
ResourcesCleanupInterval = 0
FreeTextBatchSize        = 100000
SingleCPU                = 0
PrefixResultNames        = 0
RdfFreeTextRulesSize     = 100
IndexTreeMaps            = 64
MaxMemPoolSize           = 200000000
MaxQueryMem              = 2G
VectorSize               = 1000
MaxVectorSize            = 1000000
AdjustVectorSize         = 0
ThreadsPerQuery          = $(nproc)
AsyncQueueMaxThreads     = 10
NumberOfBuffers          = $BUFFERS
MaxDirtyBuffers          = $((BUFFERS * 3 / 4))

[HTTPServer]
ServerPort                  = 127.0.0.1:$HTTP_PORT
ServerRoot                  = $dir
MaxClientConnections        = 72
DavRoot                     = DAV
EnabledDavVSP               = 0
HTTPProxyEnabled            = 0
TempASPXDir                 = 0
ServerThreads               = 72
MaxKeepAlives               = 72
KeepAliveTimeout            = 60
HTTPThreadSize              = 280000
HttpPrintWarningsInOutput   = 0
Charset                     = UTF-8
EnabledGzipContent          = 0

[Client]
SQL_PREFETCH_ROWS  = 100
SQL_PREFETCH_BYTES = 16000
SQL_QUERY_TIMEOUT  = 0
SQL_TXN_TIMEOUT    = 0

[SPARQL]
ResultSetMaxRows           = 10000000
MaxQueryCostEstimationTime = 400
MaxQueryExecutionTime      = 600
DeferInferenceRulesInit    = 0
EOF
}

isql() { isql-vt "127.0.0.1:$SQL_PORT" dba dba "$@"; }

# start_server DIR: starts virtuoso-t in DIR and waits until SQL and HTTP answer.
start_server() {
	local dir=$1
	if command -v ss >/dev/null && ss -ltn 2>/dev/null | grep -qE "127\.0\.0\.1:($SQL_PORT|$HTTP_PORT)\b"; then
		log "port $SQL_PORT or $HTTP_PORT is in use (set VIRTUOSO_SQL_PORT / VIRTUOSO_HTTP_PORT)"
		return 1
	fi
	(cd "$dir" && exec virtuoso-t +configfile "$dir/virtuoso.ini" +foreground </dev/null >"$dir/stdout.log" 2>&1) &
	echo $! >"$dir/server.pid"
	local pid
	pid=$(cat "$dir/server.pid")
	for _ in $(seq 1 600); do
		if ! kill -0 "$pid" 2>/dev/null; then
			log "virtuoso-t exited; its log:"
			tail -20 "$dir/virtuoso.log" >&2 || true
			return 1
		fi
		# The HTTP listener comes up before the SQL one ("Server online").
		if echo "status();" | isql >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.5
	done
	log "virtuoso-t did not come up in 300 s"
	return 1
}

stop_server() {
	local dir=$1
	[ -f "$dir/server.pid" ] || return 0
	local pid
	pid=$(cat "$dir/server.pid")
	if kill -0 "$pid" 2>/dev/null; then
		echo "shutdown();" | isql >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 120); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/server.pid"
}

peak_rss_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# build_cache DATA KEYDIR: loads DATA into a new database in KEYDIR.
build_cache() {
	local data=$1 keydir=$2
	local tmp="$keydir.tmp.$$"
	log "no cached database in $keydir: creating one"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	write_ini "$tmp" "$(dirname "$data")"
	start_server "$tmp"
	log "loading $data (bulk loader) …"
	local t0 t1 la
	la=$(cut -d' ' -f1-3 /proc/loadavg)
	t0=$(date +%s.%N)
	isql >"$tmp/load.log" 2>&1 <<EOF
ld_dir('$(dirname "$data")', '$(basename "$data")', '$GRAPH');
rdf_loader_run();
checkpoint;
EOF
	t1=$(date +%s.%N)
	local errs
	errs=$(echo "SELECT COUNT(*) FROM DB.DBA.LOAD_LIST WHERE ll_error IS NOT NULL;" | isql 2>/dev/null | awk 'NF==1 && $1 ~ /^[0-9]+$/ {print $1; exit}' || true)
	if [ "${errs:-1}" != 0 ]; then
		log "bulk load failed:"
		echo "SELECT ll_file, ll_error FROM DB.DBA.LOAD_LIST;" | isql >&2 || true
		stop_server "$tmp"
		return 1
	fi
	local triples
	triples=$(echo "SPARQL SELECT COUNT(*) WHERE { GRAPH <$GRAPH> { ?s ?p ?o } };" | isql 2>/dev/null |
		awk 'NF==1 && $1 ~ /^[0-9]+$/ {print $1; exit}' || true)
	local rss
	rss=$(peak_rss_kb "$(cat "$tmp/server.pid")")
	log "loaded $triples triples in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s; stopping"
	stop_server "$tmp"
	{
		echo "load_seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')"
		echo "load_peak_rss_kb=$rss"
		echo "load_loadavg=$la"
		echo "triples=$triples"
		echo "version=$(virtuoso-t -? 2>&1 | awk '/^Version/ {print $2; exit}')"
	} >"$tmp/meta"
	rm -f "$tmp/virtuoso.ini" "$tmp/virtuoso.log" "$tmp/stdout.log" "$tmp/load.log" "$tmp"/*.trx "$tmp/virtuoso-temp.db"
	rm -rf "$keydir"
	mv "$tmp" "$keydir"
	log "cached the loaded database in $keydir"
}

cmd_start() {
	local data rundir
	data=$(realpath "$1")
	rundir=$2
	ensure_installed
	local key
	key="$(basename "$data")-$(stat -c %s "$data")-b$BUFFERS"
	local keydir="$CACHE/$key"
	local cached=true
	if [ ! -f "$keydir/meta" ]; then
		cached=false
		mkdir -p "$CACHE"
		build_cache "$data" "$keydir"
	fi
	mkdir -p "$rundir"
	rundir=$(realpath "$rundir")
	cp --reflink=auto "$keydir/virtuoso.db" "$rundir/virtuoso.db"
	write_ini "$rundir" "$(dirname "$data")"
	local t0 t1
	t0=$(date +%s.%N)
	log "starting the server on a copy of the loaded database"
	start_server "$rundir"
	t1=$(date +%s.%N)
	log "server up"
	cat "$keydir/meta"
	echo "db_bytes=$(stat -c %s "$keydir/virtuoso.db")"
	echo "cached=$cached"
	echo "start_seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')"
	echo "pid=$(cat "$rundir/server.pid")"
	echo "endpoint=http://127.0.0.1:$HTTP_PORT/sparql"
}

cmd_stop() {
	local rundir=$1
	[ -d "$rundir" ] || return 0
	stop_server "$rundir"
	rm -rf "$rundir"
}

case "${1:-}" in
start) shift; [ $# -eq 2 ] || { echo "usage: $0 start DATA RUNDIR" >&2; exit 2; }; cmd_start "$@" ;;
stop) shift; [ $# -eq 1 ] || { echo "usage: $0 stop RUNDIR" >&2; exit 2; }; cmd_stop "$@" ;;
*) echo "usage: $0 start DATA RUNDIR | stop RUNDIR" >&2; exit 2 ;;
esac
