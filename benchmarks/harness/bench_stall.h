/* The progress ("stall") watchdog: a process stuck inside a call (a link
 * down, a peer gone without a word) ends within a bound, named, instead of
 * waiting for --timeout's hard watchdog or the job's time limit.
 *
 * The program beats after every call that finished (bench_stall_beat),
 * marks other progress (bench_stall_step: a step of its set-up, a row's
 * statistics) and says where it is (bench_stall_where).  A thread of this
 * process fires when no beat or step came for
 *     max(min_s, 10 x the slowest call so far,
 *         10 x the time the program expects of the coming call)
 * (+ 5 s on ranks other than 0, so that rank 0's exit ends the job and its
 * line is the one printed): it keeps the archive's checkpointed rows
 * (bench_keep.h), prints one line
 *     PROG: rank R: no progress for N s inside WHERE: a network or peer fault? ...
 * and exits BENCH_EXIT_STALL (stuck inside bench_exit, it exits with the
 * status decided there, silently).  Each rank decides alone: a stuck process
 * cannot take part in a collective.  Time the program spends in its own
 * work (not waiting for peers) is set aside with bench_stall_pause.  Off
 * under SimGrid (simulated time; SimGrid names a deadlock itself). */
#ifndef BENCH_STALL_H
#define BENCH_STALL_H

#define BENCH_STALL_FACTOR 10.0
#define BENCH_STALL_PEER_GRACE_S 5.0
/* The default of --stall-timeout: above any legitimate wait for a peer at
 * the first call of a run (16 MiB dense at 100 Mbit takes ~3 s a call). */
#define BENCH_STALL_DEFAULT "60"

/* Start the watchdog (min_s <= 0: off); -1 when its thread cannot be
 * started (named by the caller), else 0.  Not collective. */
int bench_stall_start(double min_s);
/* A call finished: progress, and its time (since the last beat or step)
 * a call's.  Cheap: a clock read. */
void bench_stall_beat(void);
/* Other progress: a step of the program finished (its time is no call's). */
void bench_stall_step(void);
/* on = 1: the program works on its own (computing, reading its input)
 * until bench_stall_pause(0), which counts as a step. */
void bench_stall_pause(int on);
/* Where the process is, for the line ("dense at 262144 B (timed calls)"). */
void bench_stall_where(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Seconds the coming calls are expected to take each (a cost model's
 * estimate; <= 0 or NaN: none). */
void bench_stall_expect(double seconds);

#endif
