#!/bin/bash
# Differential campaign of pisa-vk (issue 19; docs/conformance.md): generator 3 (or
# $PISA_GENERATOR, e.g. 4 for cross-lane operations on virtual lanes), one
# process at a time, lowest priority, one thread. Jobs: "FIRST COUNT" pairs on the command line after the binary.
# A chunk's summary goes to c3-FIRST.out, progress and failures to c3-FIRST.err; when the
# process aborts (rc other than 0 and 1: an LLVM error inside lavapipe), the seed it was
# running (from --current) is logged as aborted and the chunk resumes after it, in a new
# pair of files. One line per event in summary.log, in $PISA_CAMPAIGN_DIR (default
# /tmp/dt-campaign). Usage: difftest-campaign.sh BINARY FIRST COUNT [FIRST COUNT]...
bin=$1; shift
dir=${PISA_CAMPAIGN_DIR:-/tmp/dt-campaign}; mkdir -p "$dir"
log() { echo "$(date -u +%FT%TZ) $*" >> $dir/summary.log; }
while [ $# -ge 2 ]; do
  s=$1; n=$2; shift 2
  end=$((s + n))
  while [ $s -lt $end ]; do
    log "start seed $s count $((end - s))"
    nice -n 19 "$bin" --generator ${PISA_GENERATOR:-3} --count $((end - s)) --seed $s --threads 1 \
      --current $dir/current > $dir/c3-$s.out 2> $dir/c3-$s.err
    rc=$?
    if [ $rc -le 1 ]; then
      log "done seed $s rc=$rc: $(grep -h '^mismatches\|^failing\|^time' $dir/c3-$s.out | tr '\n' ' ')"
      s=$end
    else
      c=$(cat $dir/current 2>/dev/null)
      log "ABORT rc=$rc at seed $c (chunk from $s): $(grep -v '^\.\.\.\|^note' $dir/c3-$s.err | tail -2 | tr '\n' ' ')"
      # No seed recorded (the binary did not start: missing, busy, not executable): stop
      # rather than guess where to resume.
      if ! [ "$c" -ge "$s" ] 2>/dev/null; then
        log "STOP: no seed in progress was recorded for the chunk from $s"
        exit 2
      fi
      s=$((c + 1))
    fi
  done
done
log "all jobs done"
