#!/usr/bin/env python3
"""Where a measured CI run spent its CPU (cold-run.sh writes the inputs).

Usage: cpu-profile.py PACCT CI_LOG

PACCT holds BSD process accounting records (accton), one per process that ended, read with
acct's dump-acct; CI_LOG is .ci/run's output. The report:
  - CPU time (user + system) by command name, over every process of the run;
  - CPU time by e2e job: each job of `bash e2e/run.sh` runs in a subshell of its worker, which
    starts when run.sh logs "worker N: job NAME started" and lasts the job's reported time; every
    process descending from it is the job's. What no job started is split into Docker's and the
    node's daemons (and what their containers ran: BuildKit's builds, the pods) and the rest
    (fmt, clippy and `cargo test` before the e2e suite, run.sh's own build).
A record names its parent by process ID only, and IDs are reused over a long run; records are
written when a process ends, after its children's, so a record's parent is the first later
record with that ID.
"""
import collections
import datetime
import re
import subprocess
import sys

DAEMONS = ('dockerd', 'containerd', 'containerd-shim', 'containerd-shi', 'kubelet', 'kube-proxy',
           'kube-apiserver', 'etcd', 'kube-controller', 'kube-scheduler', 'registry', 'runc')


def records(path):
    out = subprocess.run(['dump-acct', path], capture_output=True, text=True, check=True).stdout
    recs = []
    for line in out.splitlines():
        f = [x.strip() for x in line.split('|')]
        if len(f) < 15:
            continue
        # comm, CPU seconds (user + system, in 1/100 s), pid, ppid, start, elapsed seconds
        recs.append({'comm': f[0], 'cpu': (float(f[2]) + float(f[3])) / 100.0, 'pid': int(f[9]),
                     'ppid': int(f[10]),
                     'start': datetime.datetime.strptime(f[14], '%a %b %d %H:%M:%S %Y'),
                     'elapsed': float(f[4]) / 100.0, 'parent': None})
    later = {}
    for i in range(len(recs) - 1, -1, -1):
        recs[i]['parent'] = later.get(recs[i]['ppid'])
        later[recs[i]['pid']] = i
    return recs


def jobs(path):
    started, took = {}, {}
    for line in open(path, errors='replace'):
        m = re.match(r'(\d\d:\d\d:\d\d) \[INFO\] run\.sh: worker \d+: job (\S+) started', line)
        if m:
            started[m.group(2)] = m.group(1)
        m = re.match(r'=== job (\S+) \(worker \d+\): \w+ (?:in|after) (\d+)m(\d+)s', line)
        if m:
            took[m.group(1)] = int(m.group(2)) * 60 + int(m.group(3))
    return {j: (started[j], took[j]) for j in started if j in took}


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: cpu-profile.py PACCT CI_LOG (cold-run.sh writes both)')
    recs = records(sys.argv[1])
    if not recs:
        sys.exit('cpu-profile.py: no records in ' + sys.argv[1])
    day = recs[0]['start'].date()
    roots = {}
    for job, (hms, secs) in jobs(sys.argv[2]).items():
        t = datetime.datetime.combine(day, datetime.time.fromisoformat(hms))
        best = None
        for i, r in enumerate(recs):
            if r['comm'] == 'bash' and abs((r['start'] - t).total_seconds()) <= 1 \
                    and abs(r['elapsed'] - secs) <= 3:
                if best is None or abs(r['elapsed'] - secs) < abs(recs[best]['elapsed'] - secs):
                    best = i
        if best is None:
            print(f'(job {job}: its subshell was not found in the records)')
        else:
            roots[best] = job
    memo = {}

    def owner(i):
        path, j, res = [], i, None
        while j is not None:
            if j in memo:
                res = memo[j]
                break
            path.append(j)
            if j in roots:
                res = roots[j]
                break
            if recs[j]['comm'] in DAEMONS:
                res = '(daemons: Docker, BuildKit, the node, their containers)'
            j = recs[j]['parent']
        res = res or '(no job: before the e2e suite, run.sh)'
        for k in path:
            memo[k] = res
        return res

    by_comm = collections.Counter()
    by_job = collections.Counter()
    job_comm = collections.defaultdict(collections.Counter)
    for i, r in enumerate(recs):
        by_comm[r['comm']] += r['cpu']
        j = owner(i)
        by_job[j] += r['cpu']
        job_comm[j][r['comm']] += r['cpu']
    total = sum(by_comm.values())
    print(f'{total / 60:.1f} core-minutes in {len(recs)} processes that ended during the run')
    print('\nby command (core-minutes):')
    for c, s in by_comm.most_common(30):
        print(f'  {s / 60:7.2f}  {c}')
    print('\nby e2e job (core-minutes; its largest commands):')
    for j, s in by_job.most_common():
        top = ', '.join(f'{c} {v / 60:.1f}' for c, v in job_comm[j].most_common(6) if v >= 3)
        print(f'  {s / 60:7.2f}  {j}: {top}')


if __name__ == '__main__':
    main()
