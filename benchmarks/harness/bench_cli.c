/* The table-driven command-line parser and --help (bench_cli.h). */
#include "bench_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_fail.h"
#include "bench_parse.h"
#include "bench_usage.h"
#include "reducer.h"

#define HELP_WIDTH 80        /* lines of --help stay below this */
#define DEFAULT_HELP_COL 24
#define NBSP '\x01'          /* a space --help never breaks a line at */
#define LONG_ONLY 256        /* getopt_long's value of table entry i: LONG_ONLY + i */

static int takes_value(const bench_opt *o)
{
    return o->type >= BENCH_OPT_INT && o->type <= BENCH_OPT_REDUCER_OPTION;
}

static int is_option(const bench_opt *o)
{
    return o->type != BENCH_OPT_SECTION;
}

/* An option --help shows: not a heading, not an old spelling. */
static int is_documented(const bench_opt *o)
{
    return is_option(o) && o->type != BENCH_OPT_MOVED;
}

static size_t table_size(const bench_cli *cli)
{
    size_t n = 0;
    while (cli->opts[n].type != BENCH_OPT_END)
        n++;
    return n;
}

const char *bench_opt_name(const bench_opt *o, char *buf, size_t len)
{
    if (o->letter && o->name)
        snprintf(buf, len, "-%c/--%s", o->letter, o->name);
    else if (o->name)
        snprintf(buf, len, "--%s", o->name);
    else
        snprintf(buf, len, "-%c", o->letter);
    return buf;
}

/* ---------------------------------------------------------- values */

/* Is v one of the '|'-separated choices? */
static int is_choice(const char *choices, const char *v)
{
    size_t n = strlen(v);
    for (const char *c = choices; c && *c;) {
        const char *bar = strchr(c, '|');
        size_t k = bar ? (size_t)(bar - c) : strlen(c);
        if (k == n && !strncmp(c, v, n))
            return 1;
        c += k + (bar ? 1 : 0);
    }
    return 0;
}

/* "a, b or c" from "a|b|c". */
static void choice_words(const char *choices, char *buf, size_t len)
{
    size_t off = 0, total = 1;
    for (const char *c = choices; *c; c++)
        total += *c == '|';
    size_t i = 0;
    for (const char *c = choices; *c && off < len; i++) {
        const char *bar = strchr(c, '|');
        int k = bar ? (int)(bar - c) : (int)strlen(c);
        const char *sep = i == 0 ? "" : i + 1 == total ? " or " : ", ";
        off += (size_t)snprintf(buf + off, len - off, "%s%.*s", sep, k, c);
        c += k + (bar ? 1 : 0);
    }
}

/* What a value of o must be, for the message. */
static void expectation(const bench_opt *o, char *buf, size_t len)
{
    if (o->expect) {
        snprintf(buf, len, "%s", o->expect);
        return;
    }
    switch (o->type) {
    case BENCH_OPT_INT:
    case BENCH_OPT_LONG: snprintf(buf, len, "an integer in %.0f..%.0f", o->min, o->max); break;
    case BENCH_OPT_U64: snprintf(buf, len, "a non-negative integer"); break;
    case BENCH_OPT_SIZE: snprintf(buf, len, "a size (bytes, K/M/G suffixes)"); break;
    case BENCH_OPT_DOUBLE: snprintf(buf, len, "a number in %g..%g", o->min, o->max); break;
    case BENCH_OPT_CHOICE: choice_words(o->choices, buf, len); break;
    default: snprintf(buf, len, "valid"); break;
    }
}

static int parse_long(const char *s, double min, double max, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = s && *s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || errno || *end || (double)v < min || (double)v > max)
        return -1;
    *out = v;
    return 0;
}

/* Parse v into o's field; 0, or -1 when v is not a valid value. */
static int store_value(const bench_opt *o, const char *v, void *opts)
{
    char *field = (char *)opts + o->off;
    switch (o->type) {
    case BENCH_OPT_INT: return bench_parse_int(v, (long)o->min, (long)o->max, (int *)(void *)field);
    case BENCH_OPT_LONG: return parse_long(v, o->min, o->max, (long *)(void *)field);
    case BENCH_OPT_U64: {
        uint64_t u;
        if (bench_parse_u64(v, &u) || (o->max > o->min && ((double)u < o->min || (double)u > o->max)))
            return -1;
        *(uint64_t *)(void *)field = u;
        return 0;
    }
    case BENCH_OPT_SIZE: {
        uint64_t u;
        if (bench_parse_size(v, &u) || (o->min > 0 && (double)u < o->min))
            return -1;
        *(uint64_t *)(void *)field = u;
        return 0;
    }
    case BENCH_OPT_DOUBLE: return bench_parse_double(v, o->min, o->max, (double *)(void *)field);
    case BENCH_OPT_CHOICE:
        if (!is_choice(o->choices, v))
            return -1;
        /* fall through */
    case BENCH_OPT_STRING: *(const char **)(void *)field = v; return 0;
    case BENCH_OPT_FLAG: *(int *)(void *)field = o->flag_value; return 0;
    default: return -1;
    }
}

/* Whether v is a whole number of an integer or real option that is
 * larger than the option's maximum. */
static int above_limit(const bench_opt *o, const char *v)
{
    if (o->type != BENCH_OPT_INT && o->type != BENCH_OPT_LONG && o->type != BENCH_OPT_DOUBLE)
        return 0;
    char *end = NULL;
    errno = 0;
    double x = v && *v ? strtod(v, &end) : 0.0;
    if (!v || !*v || *end || errno == EINVAL || !(o->max > o->min))
        return 0;
    if (o->type != BENCH_OPT_DOUBLE && strpbrk(v, ".eEnNiI"))   /* integers only */
        return 0;
    return x > o->max;
}

/* Store one option's value; 0, or -1 with "NAME: 'v' is not ..." in msg. */
static int store(const bench_opt *o, const char *v, void *opts, char *msg, size_t len)
{
    char name[96], why[512] = "";
    bench_opt_name(o, name, sizeof name);
    if (o->type == BENCH_OPT_CUSTOM) {
        if (o->parse(v, opts, why, sizeof why) == 0)
            return 0;
        snprintf(msg, len, "%s: %s", name, why);
        return -1;
    }
    if (o->type == BENCH_OPT_REDUCER_OPTION) {
        int rc = rb_options_set((rb_options *)(void *)((char *)opts + o->off), v);
        if (rc == RB_OK)
            return 0;
        snprintf(msg, len, "%s: %s: %s", name, rb_strerror(rc), rb_last_error());
        return -1;
    }
    if (store_value(o, v, opts) == 0)
        return 0;
    expectation(o, why, sizeof why);
    if (above_limit(o, v))   /* a number, but past the cap: name the cap */
        snprintf(msg, len, "%s: '%s' is more than the limit %.17g (%s, at most %.17g)", name, v, o->max,
                 why, o->max);
    else
        snprintf(msg, len, "%s: '%s' is not %s", name, v, why);
    return -1;
}

static int apply_defaults(const bench_cli *cli, void *opts, char *msg, size_t len)
{
    for (const bench_opt *o = cli->opts; o->type != BENCH_OPT_END; o++) {
        if (!o->def || !takes_value(o))
            continue;
        char why[512];
        if (store(o, o->def, opts, why, sizeof why)) {
            snprintf(msg, len, "the default of %s", why);   /* a bug in the table */
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------- parsing */

/* getopt_long's tables for cli; NULL when out of memory. */
static struct option *getopt_tables(const bench_cli *cli, char **shorts)
{
    size_t n = table_size(cli), k = 0, s = 0;
    struct option *longs = calloc(n + 1, sizeof *longs);
    *shorts = malloc(3 * n + 3);
    if (!longs || !*shorts) {
        free(longs), free(*shorts);
        return NULL;
    }
    /* '+': stop at the first word that is not an option (no program takes
     * one), so the word before a stray one is the option it was meant for */
    (*shorts)[s++] = '+';
    (*shorts)[s++] = ':';   /* ':' for a missing value, '?' for an unknown option */
    for (size_t i = 0; i < n; i++) {
        const bench_opt *o = &cli->opts[i];
        if (!is_option(o))
            continue;
        /* an old spelling takes a value if one is attached, so that both
         * "-T 60" and "-T60" stop at it, not at a stray "60" */
        int has = o->optional || o->type == BENCH_OPT_MOVED ? optional_argument
                : takes_value(o)                        ? required_argument
                                                        : no_argument;
        if (o->letter) {
            (*shorts)[s++] = o->letter;
            for (int c = 0; c < has; c++)
                (*shorts)[s++] = ':';
        }
        if (o->name)
            longs[k++] = (struct option){o->name, has, NULL, LONG_ONLY + (int)i};
    }
    (*shorts)[s] = '\0';
    return longs;
}

static const bench_opt *by_letter(const bench_cli *cli, int c)
{
    for (const bench_opt *o = cli->opts; o->type != BENCH_OPT_END; o++)
        if (is_option(o) && o->letter == c)
            return o;
    return NULL;
}

/* One option getopt_long returned (c); BENCH_CLI_OK, _DONE or _ERROR. */
static int handle(const bench_cli *cli, int c, char **argv, void *opts, char *msg, size_t len)
{
    if (c == ':') {
        snprintf(msg, len, "option '%s' needs a value", argv[optind - 1]);
        return BENCH_CLI_ERROR;
    }
    const bench_opt *o = c >= LONG_ONLY ? &cli->opts[c - LONG_ONLY] : c == '?' ? NULL : by_letter(cli, c);
    if (!o) {
        if (optopt > 0 && optopt < LONG_ONLY)   /* a short option, maybe inside a bundle */
            snprintf(msg, len, "unknown option '-%c'", optopt);
        else
            snprintf(msg, len, "unknown option '%s'", argv[optind - 1]);
        return BENCH_CLI_ERROR;
    }
    if (o->type == BENCH_OPT_MOVED) {
        char name[96];
        snprintf(msg, len, "%s: %s", bench_opt_name(o, name, sizeof name), o->help);
        return BENCH_CLI_ERROR;
    }
    if (o->type == BENCH_OPT_ACTION) {
        o->action(cli, opts);
        return BENCH_CLI_DONE;
    }
    if (o->optional && !optarg) {
        *(int *)(void *)((char *)opts + o->off) = o->flag_value;
        return BENCH_CLI_OK;
    }
    return store(o, optarg, opts, msg, len) ? BENCH_CLI_ERROR : BENCH_CLI_OK;
}

/* A word where no option wanted one: after a flag, or after an option
 * whose value is optional and so must be attached ("-f 4", "-c 0"), say so. */
static void stray_argument(char **argv, int at, char *msg, size_t len)
{
    const char *before = at > 1 ? argv[at - 1] : NULL;
    if (before && before[0] == '-' && strlen(before) > 1 && strcmp(before, "--") != 0)
        snprintf(msg, len, "unexpected argument '%s' after '%s', which takes no separate value",
                 argv[at], before);
    else
        snprintf(msg, len, "unexpected argument '%s'", argv[at]);
}

int bench_cli_parse(const bench_cli *cli, int argc, char **argv, void *opts, char *msg,
                    size_t len)
{
    char *shorts = NULL;
    struct option *longs = getopt_tables(cli, &shorts);
    if (!longs) {
        snprintf(msg, len, "out of memory");
        return BENCH_CLI_ERROR;
    }
    int rc = apply_defaults(cli, opts, msg, len) ? BENCH_CLI_ERROR : BENCH_CLI_OK;
    opterr = 0;
    optind = 0;   /* GNU: start afresh (a test parses several command lines) */
    for (int c; rc == BENCH_CLI_OK && (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1;)
        rc = handle(cli, c, argv, opts, msg, len);
    if (rc == BENCH_CLI_OK && optind < argc) {
        stray_argument(argv, optind, msg, len);
        rc = BENCH_CLI_ERROR;
    }
    free(longs);
    free(shorts);
    return rc;
}

void bench_cli_parse_or_exit(const bench_cli *cli, int argc, char **argv, void *opts)
{
    char msg[1024] = "";
    int rc = bench_cli_parse(cli, argc, argv, opts, msg, sizeof msg);
    if (rc == BENCH_CLI_ERROR)
        bench_usage_error(cli->prog, "%s", msg);
    if (rc == BENCH_CLI_DONE)
        bench_exit(BENCH_EXIT_OK);
}

/* ---------------------------------------------------------- --help */

const char *bench_cli_reducer_names(const char *lead, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "%s", lead);
    for (size_t i = 0; i < rb_reducer_count() && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, " %s", rb_reducer_name_at(i));
    return buf;
}

/* "  -m, --message-size ARG": the option column of o. */
static void option_column(const bench_opt *o, int any_letter, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "  ");
    if (o->letter)
        k += (size_t)snprintf(buf + k, len - k, "-%c%s", o->letter, o->name ? ", " : "");
    else if (any_letter)
        k += (size_t)snprintf(buf + k, len - k, "    ");
    if (o->name && k < len)
        k += (size_t)snprintf(buf + k, len - k, "--%s", o->name);
    if (o->arg && k < len)
        snprintf(buf + k, len - k, o->optional ? "[=%s]" : " %s", o->arg);
}

/* text from column col, wrapped below HELP_WIDTH; "\n" in text breaks a
 * line.  The cursor is at column *pos. */
static void wrap(FILE *out, const char *text, int col, int pos)
{
    int first = 1;
    for (const char *p = text; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        int brk = *p == '\n';
        int n = brk ? 0 : (int)strcspn(p, " \n");   /* a word; NBSP joins words */
        if (brk || (!first && pos + 1 + n >= HELP_WIDTH)) {
            fprintf(out, "\n%*s", col, "");
            pos = col;
            first = 1;
            p += brk;
            if (brk)
                continue;
        }
        if (!first)
            pos += fprintf(out, " ");
        for (int i = 0; i < n; i++, pos++)
            fputc(p[i] == NBSP ? ' ' : p[i], out);
        first = 0;
        p += n;
    }
    fputc('\n', out);
}

static void help_line(FILE *out, const bench_opt *o, int any_letter, int col)
{
    char spec[128], text[4096];
    option_column(o, any_letter, spec, sizeof spec);
    const char *help = o->help_fn ? o->help_fn() : o->help ? o->help : "";
    const char *def = o->def_text ? o->def_text : takes_value(o) ? o->def : NULL;
    size_t k = (size_t)snprintf(text, sizeof text, "%s", help);
    if (def && k + 16 < sizeof text) {
        /* a short default stays on one line: "(default 0 = none)" */
        char sep = strlen(def) <= 16 ? NBSP : ' ';
        k += (size_t)snprintf(text + k, sizeof text - k, " (default%c", sep);
        for (const char *d = def; *d && k + 2 < sizeof text; d++)
            text[k++] = *d == ' ' ? sep : *d;
        snprintf(text + k, sizeof text - k, ")");
    }
    int pos = fprintf(out, "%s", spec);
    pos += fprintf(out, "%*s", pos + 2 > col ? 2 : col - pos, "");
    wrap(out, text, col, pos);
}

void bench_cli_help(const bench_cli *cli, FILE *out)
{
    int col = cli->help_col > 0 ? cli->help_col : DEFAULT_HELP_COL, any_letter = 0;
    for (const bench_opt *o = cli->opts; o->type != BENCH_OPT_END; o++)
        any_letter |= is_documented(o) && o->letter;
    fputs(cli->usage, out);
    for (const bench_opt *o = cli->opts; o->type != BENCH_OPT_END; o++) {
        if (o->type == BENCH_OPT_SECTION)
            fprintf(out, "\n%s\n", o->help);
        else if (is_documented(o))
            help_line(out, o, any_letter, col);
    }
    if (cli->epilogue)
        cli->epilogue(out);
}

void bench_cli_help_action(const bench_cli *cli, void *opts)
{
    (void)opts;
    if (bench_world_rank() == 0)
        bench_cli_help(cli, stdout);
}
