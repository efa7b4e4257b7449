/* The programs' command lines: one table per program gives each option's
 * long name, short letter, type, range, default and help line; the parser
 * (getopt_long underneath, so "--name=value", "-xVALUE" and unambiguous
 * abbreviations work) and --help are both generated from it, so what is
 * documented is what is parsed.  Like libreducer's reducer options
 * (src/options.c), but for the programs' own options.
 *
 * Strict: a value must be whole and in range, else the option is named in
 * a one-line message ("-i/--iterations: '0' is not an integer >= 1") and
 * the program exits 2 (bench_cli_parse_or_exit). */
#ifndef BENCH_CLI_H
#define BENCH_CLI_H

#include <stddef.h>
#include <stdio.h>

typedef enum bench_opt_type {
    BENCH_OPT_END = 0,    /* ends the table */
    BENCH_OPT_SECTION,    /* a heading in --help (.help), no option */
    BENCH_OPT_FLAG,       /* no value: stores .flag_value into an int */
    BENCH_OPT_INT,        /* int in [min, max] */
    BENCH_OPT_LONG,       /* long in [min, max] */
    BENCH_OPT_U64,        /* uint64_t, decimal; in [min, max] when max > min */
    BENCH_OPT_SIZE,       /* uint64_t, with K/M/G suffixes (powers of 1024) */
    BENCH_OPT_DOUBLE,     /* double in [min, max] */
    BENCH_OPT_STRING,     /* const char *, pointing into argv (or at .def) */
    BENCH_OPT_CHOICE,     /* const char *, one of .choices ("host|cuda") */
    BENCH_OPT_CUSTOM,     /* .parse does it (several fields, lists, enums) */
    BENCH_OPT_REDUCER_OPTION, /* KEY=VALUE into the rb_options (rb_options_set) */
    BENCH_OPT_ACTION,     /* no value: .action runs, then the program exits 0 */
    BENCH_OPT_MOVED,      /* an old spelling, refused wherever it appears (with or
                             without a value) by "NAME: .help", .help saying what
                             it became; not in --help */
} bench_opt_type;

struct bench_cli;

typedef struct bench_opt {
    bench_opt_type type;
    const char *name;     /* long name without "--", or NULL */
    char letter;          /* short letter, or 0 */
    const char *arg;      /* the value in --help ("N", "FILE"); NULL for no value */
    size_t off;           /* offsetof the field in the program's options struct */
    double min, max;      /* INT, LONG, DOUBLE: accepted range, inclusive; SIZE: at least min */
    const char *def;      /* default, parsed like a command-line value before
                             argv (so --help cannot disagree with it); NULL: the
                             field keeps what the program put there */
    const char *help;     /* wrapped to the terminal width; "\n" breaks a line */
    const char *def_text; /* shown as the default instead of .def (e.g. "0 = none") */
    const char *expect;   /* what a value must be, for the error message ("an
                             integer >= 1"); NULL: said from the type and range */
    const char *choices;  /* CHOICE: "a|b|c" */
    int flag_value;       /* FLAG: the value stored; INT with .optional: the
                             value stored when no value is given */
    int optional;         /* the value may be left out (--check[=0|1]) */
    /* CUSTOM: store value into opts; 0, or -1 with what is wrong in msg
     * ("'x' is not ROWSxCOLS"; the parser puts the option's name first). */
    int (*parse)(const char *value, void *opts, char *msg, size_t len);
    /* ACTION (--help, --list-reducers): print (rank 0) and return. */
    void (*action)(const struct bench_cli *cli, void *opts);
    /* Help text built at run time (e.g. the reducers compiled in); used
     * instead of .help when set.  Returns a static buffer. */
    const char *(*help_fn)(void);
} bench_opt;

typedef struct bench_cli {
    const char *prog;            /* "rb_micro": messages start with it */
    const char *usage;           /* first lines of --help */
    const bench_opt *opts;       /* ends with a BENCH_OPT_END entry */
    int help_col;                /* column of the help text (0: 24) */
    void (*epilogue)(FILE *out); /* after the options in --help; may be NULL */
} bench_cli;

enum { BENCH_CLI_OK = 0, BENCH_CLI_DONE = 1, BENCH_CLI_ERROR = -1 };

/* The table's defaults, then argv, into opts (fields the table does not
 * name keep what the caller put there).  BENCH_CLI_OK; BENCH_CLI_DONE when
 * an action ran (--help: the program exits 0); BENCH_CLI_ERROR with the
 * one-line reason in msg.  Not collective; prints only through actions. */
int bench_cli_parse(const bench_cli *cli, int argc, char **argv, void *opts, char *msg,
                    size_t len);
/* For main(): on BENCH_CLI_ERROR, bench_usage_error (rank 0 prints, every
 * rank exits 2); on BENCH_CLI_DONE, bench_exit(0). */
void bench_cli_parse_or_exit(const bench_cli *cli, int argc, char **argv, void *opts);

/* --help: usage, the options (with their defaults), the epilogue. */
void bench_cli_help(const bench_cli *cli, FILE *out);
/* The ACTION of -h/--help: bench_cli_help to stdout on rank 0. */
void bench_cli_help_action(const struct bench_cli *cli, void *opts);
/* lead followed by the reducers compiled in ("reducers: none dense ..."),
 * for a help_fn; returns buf. */
const char *bench_cli_reducer_names(const char *lead, char *buf, size_t len);
/* How messages name an option: "-d/--device", "--density" or "-r". */
const char *bench_opt_name(const bench_opt *o, char *buf, size_t len);

#endif
