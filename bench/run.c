/* run.c — one `ngpt bench` run: every section of bench/ngpt_bench.h in
 * turn (the FMA peak, the read bandwidth, the kernels, the workloads) under one progress line,
 * and what the report says of the machine and the run. */
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "ngpt_bench.h"

int bench_run(const bench_opts *o, bench_report *r)
{
    bench_cpu_name(r->cpu, sizeof r->cpu);
    time_t now = time(NULL);
    struct tm tm;
    strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    const double t0 = bench_now();
    bench_progress_begin(bench_peak_count(o) + bench_bandwidth_count(o) + bench_kernels_count(o) +
                         bench_workloads_count(o));
    ngpt_status st = bench_peaks(o, r);
    int rc = st ? bench_failed("FMA peak probe", st) : BENCH_OK;
    if (!rc && (st = bench_bandwidth(o, r))) rc = bench_failed("read bandwidth probe", st);
    if (!rc) rc = bench_kernels(o, r);
    if (!rc) rc = bench_workloads(o, r);
    bench_progress_end();
    r->wall_s = bench_now() - t0;
    r->peak_rss = bench_peak_rss();
    bench_report_sort(r);
    return rc;
}
