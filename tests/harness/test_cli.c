/* The programs' option tables (benchmarks/harness/bench_cli.h) against the
 * parser and --help, in-process:
 *
 *   test_cli              check every table (exit 0, or 1 naming what failed)
 *   test_cli list PROG    the option spellings of PROG's table, one a line
 *                         (tests/harness/cli_help.sh compares them with PROG --help)
 *   test_cli moved PROG   the old spellings PROG refuses (BENCH_OPT_MOVED)
 *
 * Checks per table: no name or letter twice; the defaults parse; --help
 * (without the free-text epilogue) shows every option at the start of a
 * line, with no line of 80 columns or more; a value out of range, a
 * wrong choice and a missing value are refused with a message naming the
 * option (an unsigned one also " -1", which strtoull reads as 2^64 - 1);
 * giving an option its default value changes nothing; an unknown
 * option and a stray argument are refused; an old spelling (MOVED) is
 * absent from --help and refused, alone or with a value, by a message
 * naming it and the option it became. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpubench/gpubench.h"
#include "micro/micro.h"
#include "sketch/sketch.h"
#include "train/train.h"

typedef struct program {
    const char *name;
    const bench_cli *cli;
    size_t size;       /* of its options struct */
} program;

static const program programs[] = {
    {"rb_micro", &micro_cli, sizeof(micro_opts)},
    {"rb_train", &train_cli, sizeof(train_opts)},
    {"rb_sketch", &sketch_cli, sizeof(sketch_args)},
    {"rb_gpubench", &gpubench_cli, sizeof(gpubench_opts)},
};
#define NPROGRAMS (sizeof programs / sizeof *programs)

static int failures;

static void fail(const program *p, const char *fmt, const char *a, const char *b)
{
    printf("FAIL: %s: ", p->name);
    printf(fmt, a, b);
    printf("\n");
    failures++;
}

static int is_option(const bench_opt *o)
{
    return o->type != BENCH_OPT_SECTION;
}

/* Shown in --help: an option, not an old spelling. */
static int is_documented(const bench_opt *o)
{
    return is_option(o) && o->type != BENCH_OPT_MOVED;
}

static int takes_value(const bench_opt *o)
{
    return o->type >= BENCH_OPT_INT && o->type <= BENCH_OPT_REDUCER_OPTION;
}

/* The spelling used on a command line: "--name" or "-x". */
static void spelling(const bench_opt *o, char *buf, size_t len)
{
    if (o->name)
        snprintf(buf, len, "--%s", o->name);
    else
        snprintf(buf, len, "-%c", o->letter);
}

/* PROG OPTION VALUE, or PROG --name=VALUE when the value is optional. */
static void command(const program *p, const bench_opt *o, const char *value, char *buf, size_t len,
                    char **argv)
{
    spelling(o, buf, len);
    argv[0] = (char *)p->name, argv[1] = buf, argv[2] = (char *)value, argv[3] = NULL;
    if (o->optional) {
        snprintf(buf + strlen(buf), len - strlen(buf), "=%s", value);
        argv[2] = NULL;
    }
}

/* Parse argv (NULL-terminated, argv[0] = program) into a fresh struct. */
static int parse(const program *p, void *opts, char *msg, size_t len, char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    memset(opts, 0, p->size);
    return bench_cli_parse(p->cli, argc, argv, opts, msg, len);
}

static void check_unique(const program *p)
{
    for (const bench_opt *a = p->cli->opts; a->type != BENCH_OPT_END; a++)
        for (const bench_opt *b = a + 1; is_option(a) && b->type != BENCH_OPT_END; b++) {
            if (!is_option(b))
                continue;
            if (a->name && b->name && !strcmp(a->name, b->name))
                fail(p, "--%s twice in the table%s", a->name, "");
            if (a->letter && a->letter == b->letter) {
                char l[3] = {'-', a->letter, 0};
                fail(p, "%s twice in the table%s", l, "");
            }
        }
}

/* --help without the epilogue: every option starts a line, lines < 80. */
static void check_help(const program *p)
{
    bench_cli plain = *p->cli;
    plain.epilogue = NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    bench_cli_help(&plain, f);
    fclose(f);
    for (char *line = text, *end; line && *line; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        if (n >= 80) {
            char l[256];
            snprintf(l, sizeof l, "%.*s", (int)n, line);
            fail(p, "--help line of %s columns or more: %s", "80", l);
        }
    }
    for (const bench_opt *o = p->cli->opts; o->type != BENCH_OPT_END; o++) {
        if (!is_documented(o))
            continue;
        char want[96];
        if (o->letter && o->name)
            snprintf(want, sizeof want, "\n  -%c, --%s", o->letter, o->name);
        else if (o->letter)
            snprintf(want, sizeof want, "\n  -%c", o->letter);
        else
            snprintf(want, sizeof want, "\n      --%s", o->name);
        if (!strstr(text, want))
            fail(p, "--help has no line starting with '%s'%s", want + 1, "");
        if (!o->help && !o->help_fn)
            fail(p, "%s has no help text%s", want + 1, "");
        if (takes_value(o) && !o->arg)
            fail(p, "%s takes a value but --help does not name it%s", want + 1, "");
    }
    free(text);
}

/* argv = PROG OPTION VALUE must fail with a message naming the option. */
static void expect_refused(const program *p, void *opts, const bench_opt *o, const char *value)
{
    char opt[96], name[96], msg[1024] = "", *argv[4];
    command(p, o, value, opt, sizeof opt, argv);
    bench_opt_name(o, name, sizeof name);
    if (parse(p, opts, msg, sizeof msg, argv) != BENCH_CLI_ERROR)
        fail(p, "%s '%s' was accepted", opt, value);
    else if (strncmp(msg, name, strlen(name)))
        fail(p, "the message for a bad %s does not start with its name: %s", opt, msg);
}

static void check_values(const program *p, void *opts, void *defaults)
{
    for (const bench_opt *o = p->cli->opts; o->type != BENCH_OPT_END; o++) {
        char opt[96], v[64], msg[1024] = "";
        spelling(o, opt, sizeof opt);
        if (o->type == BENCH_OPT_INT || o->type == BENCH_OPT_LONG) {
            snprintf(v, sizeof v, "%.0f", o->min - 1);
            expect_refused(p, opts, o, v);
            snprintf(v, sizeof v, "%.0f", o->max + 1);
            expect_refused(p, opts, o, v);
            expect_refused(p, opts, o, "1.5");
        } else if (o->type == BENCH_OPT_DOUBLE) {
            snprintf(v, sizeof v, "%g", o->min > 0 ? 0.0 : o->min - 1);
            expect_refused(p, opts, o, v);
            if (o->max < 1e300) {
                snprintf(v, sizeof v, "%.17g", o->max * 2 + 1);
                expect_refused(p, opts, o, v);
            }
            expect_refused(p, opts, o, "nan");
        } else if (o->type == BENCH_OPT_CHOICE) {
            expect_refused(p, opts, o, "no-such-choice");
        } else if (o->type == BENCH_OPT_U64 || o->type == BENCH_OPT_SIZE) {
            expect_refused(p, opts, o, "-1");
            expect_refused(p, opts, o, " -1");   /* strtoull: 2^64 - 1 */
            expect_refused(p, opts, o, "");
        }
        if (takes_value(o) && !o->optional) {   /* the value missing */
            char *argv[] = {(char *)p->name, opt, NULL};
            if (parse(p, opts, msg, sizeof msg, argv) != BENCH_CLI_ERROR || !strstr(msg, "needs a value"))
                fail(p, "%s without a value: '%s'", opt, msg);
        }
        /* Its own default changes nothing (numbers: the field compared). */
        if (o->def && o->type >= BENCH_OPT_INT && o->type <= BENCH_OPT_DOUBLE) {
            char *argv[4];
            command(p, o, o->def, opt, sizeof opt, argv);
            size_t width = o->type == BENCH_OPT_INT ? sizeof(int) : o->type == BENCH_OPT_LONG ? sizeof(long)
                         : o->type == BENCH_OPT_DOUBLE ? sizeof(double) : sizeof(uint64_t);
            if (parse(p, opts, msg, sizeof msg, argv) != BENCH_CLI_OK)
                fail(p, "%s given its default: %s", opt, msg);
            else if (memcmp((char *)opts + o->off, (char *)defaults + o->off, width))
                fail(p, "%s given its default '%s' stores another value", opt, o->def);
        }
    }
}

/* An old spelling: refused alone, with a value and with one attached,
 * by "NAME: ... --NEW ..." (the message says where it went). */
static void check_moved(const program *p, void *opts)
{
    for (const bench_opt *o = p->cli->opts; o->type != BENCH_OPT_END; o++) {
        if (o->type != BENCH_OPT_MOVED)
            continue;
        char opt[96], attached[128], name[96], msg[1024];
        spelling(o, opt, sizeof opt);
        snprintf(attached, sizeof attached, o->name ? "%s=5" : "%s5", opt);
        bench_opt_name(o, name, sizeof name);
        char *alone[] = {(char *)p->name, opt, NULL}, *valued[] = {(char *)p->name, opt, "5", NULL},
             *joined[] = {(char *)p->name, attached, NULL};
        char **lines[] = {alone, valued, joined};
        for (size_t i = 0; i < 3; i++) {
            msg[0] = '\0';
            if (parse(p, opts, msg, sizeof msg, lines[i]) != BENCH_CLI_ERROR)
                fail(p, "the old spelling %s was accepted%s", lines[i][1], "");
            else if (strncmp(msg, name, strlen(name)) || !strstr(msg + strlen(name), "--"))
                fail(p, "the old spelling %s: the message names no new option: %s", lines[i][1], msg);
        }
        if (!o->help)
            fail(p, "the old spelling %s says nothing of where it went%s", opt, "");
    }
}

/* A value after an option that takes none, or whose value must be attached
 * ("-f 4", "-c 0"), is refused naming that option, also before others. */
static void check_stray_after_flags(const program *p, void *opts)
{
    for (const bench_opt *o = p->cli->opts; o->type != BENCH_OPT_END; o++) {
        if (o->type != BENCH_OPT_FLAG && !o->optional)
            continue;
        char opt[96], want[192], msg[1024] = "";
        spelling(o, opt, sizeof opt);
        snprintf(want, sizeof want, "unexpected argument '4' after '%s'", opt);
        char *line[] = {(char *)p->name, opt, "4", "--help", NULL};
        if (parse(p, opts, msg, sizeof msg, line) != BENCH_CLI_ERROR || !strstr(msg, want))
            fail(p, "%s 4: '%s'", opt, msg);
    }
}

static void check_program(const program *p)
{
    void *opts = calloc(1, p->size), *defaults = calloc(1, p->size);
    char msg[1024] = "";
    check_unique(p);
    char *none[] = {(char *)p->name, NULL};
    if (parse(p, defaults, msg, sizeof msg, none) != BENCH_CLI_OK)
        fail(p, "the defaults do not parse: %s%s", msg, "");
    check_help(p);
    check_values(p, opts, defaults);
    check_moved(p, opts);
    char *unknown[] = {(char *)p->name, "--no-such-option", NULL};
    if (parse(p, opts, msg, sizeof msg, unknown) != BENCH_CLI_ERROR || !strstr(msg, "unknown option '--no-such-option'"))
        fail(p, "an unknown option: '%s'%s", msg, "");
    char *stray[] = {(char *)p->name, "stray", NULL};
    if (parse(p, opts, msg, sizeof msg, stray) != BENCH_CLI_ERROR || !strstr(msg, "unexpected argument 'stray'"))
        fail(p, "a stray argument: '%s'%s", msg, "");
    check_stray_after_flags(p, opts);
    free(opts);
    free(defaults);
}

/* The spellings of PROG's documented options, or of its old ones. */
static int list(const char *name, int moved)
{
    for (size_t i = 0; i < NPROGRAMS; i++) {
        if (strcmp(programs[i].name, name))
            continue;
        for (const bench_opt *o = programs[i].cli->opts; o->type != BENCH_OPT_END; o++) {
            if (!is_option(o) || is_documented(o) == moved)
                continue;
            if (o->letter)
                printf("-%c\n", o->letter);
            if (o->name)
                printf("--%s\n", o->name);
        }
        return 0;
    }
    fprintf(stderr, "test_cli: no program '%s'\n", name);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 3 && (!strcmp(argv[1], "list") || !strcmp(argv[1], "moved")))
        return list(argv[2], !strcmp(argv[1], "moved"));
    if (argc != 1) {
        fprintf(stderr, "usage: test_cli [list PROG | moved PROG]\n");
        return 2;
    }
    for (size_t i = 0; i < NPROGRAMS; i++)
        check_program(&programs[i]);
    printf("%zu option tables checked: %d failure(s)\n", NPROGRAMS, failures);
    return failures ? 1 : 0;
}
