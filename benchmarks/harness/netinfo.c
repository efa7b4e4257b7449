/* The run's network, launcher and Slurm step: see netinfo.h. */
#include "netinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5attr.h"
#include "simmeta.h"

#define INFO_VALUE_LEN 512

const char *bench_launcher(void)
{
    if (bench_sim_is_simulated())
        return "smpirun";
    const char *ns = getenv("PMIX_NAMESPACE");
    if (ns && !strncmp(ns, "slurm.pmix.", 11))
        return "srun";
    if (getenv("OMPI_COMM_WORLD_SIZE"))
        return "mpirun";
    if (getenv("PMI_RANK") || getenv("PMI_SIZE"))
        return "hydra";
    if (getenv("SLURM_STEP_ID") && getenv("SLURM_PROCID"))
        return "srun";
    return "none";
}

static const char *env_or_empty(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

/* The network as RB_NETWORK_INFO's file says it, one value per key. */
typedef struct {
    char network[INFO_VALUE_LEN], link_rate[INFO_VALUE_LEN], transport[INFO_VALUE_LEN];
    char shaper[INFO_VALUE_LEN], topology[INFO_VALUE_LEN];
    double link_bps;
} net_info;

static void copy_value(char *dst, const char *src)
{
    snprintf(dst, INFO_VALUE_LEN, "%s", src);
    dst[strcspn(dst, "\r\n")] = '\0';
}

/* One key=value line into INFO; 0, or -1 with *why set for a bad value. */
static int parse_line(net_info *info, char *line, const char **why)
{
    char *eq = strchr(line, '=');
    if (!eq || line[0] == '#')
        return 0;
    *eq = '\0';
    const char *key = line, *val = eq + 1;
    if (!strcmp(key, "network"))
        copy_value(info->network, val);
    else if (!strcmp(key, "link_rate"))
        copy_value(info->link_rate, val);
    else if (!strcmp(key, "transport"))
        copy_value(info->transport, val);
    else if (!strcmp(key, "shaper"))
        copy_value(info->shaper, val);
    else if (!strcmp(key, "topology"))
        copy_value(info->topology, val);
    else if (!strcmp(key, "link_bps")) {
        char *end;
        errno = 0;
        double v = strtod(val, &end);
        if (errno || end == val || (*end && *end != '\n') || !(v >= 0.0) || v > 1e15) {
            *why = "link_bps is not a bit rate";
            return -1;
        }
        info->link_bps = v;
    }
    return 0;
}

/* 0 with INFO filled, or -1 with WHY (the file's fault, in words). */
static int read_info(const char *path, net_info *info, char *why, size_t len)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char line[INFO_VALUE_LEN + 64];
    const char *bad = NULL;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, fp))
        rc = parse_line(info, line, &bad);
    fclose(fp);
    if (!rc && !info->network[0])
        bad = "no network= line", rc = -1;
    if (rc)
        snprintf(why, len, "%s: %s", path, bad);
    return rc;
}

/* Without an info file: what the run itself shows. */
static const char *network_without_info(int nodes)
{
    if (bench_sim_is_simulated())
        return "simulated";
    return nodes <= 1 ? "one node" : "not recorded";
}

int bench_netinfo_write_meta(hid_t file, int nodes)
{
    net_info info = {0};
    char why[INFO_VALUE_LEN + 64] = "";
    const char *path = getenv("RB_NETWORK_INFO");
    char network[sizeof why + 32];
    if (path && *path && !read_info(path, &info, why, sizeof why))
        snprintf(network, sizeof network, "%s", info.network);
    else if (path && *path)
        snprintf(network, sizeof network, "not recorded (RB_NETWORK_INFO: %s)", why);
    else
        snprintf(network, sizeof network, "%s", network_without_info(nodes));
    if (why[0])
        memset(&info, 0, sizeof info);
    const char *const kv[][2] = {
        {"network", network},
        {"network_link_rate", info.link_rate},
        {"network_transport", info.transport},
        {"network_shaper", info.shaper},
        {"network_topology", info.topology},
        {"network_info_file", path ? path : ""},
        {"launcher", bench_launcher()},
        {"launch_command", env_or_empty("RB_LAUNCH_COMMAND")},
        {"slurm_job_num_nodes", env_or_empty("SLURM_JOB_NUM_NODES")},
        {"slurm_step_id", env_or_empty("SLURM_STEP_ID")},
        {"slurm_step_num_nodes", env_or_empty("SLURM_STEP_NUM_NODES")},
        {"slurm_step_nodelist", env_or_empty("SLURM_STEP_NODELIST")},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof kv / sizeof *kv; i++)
        rc |= bench_h5_attr_str(file, kv[i][0], kv[i][1]);
    rc |= bench_h5_attr_double(file, "network_link_bps", info.link_bps);
    return rc;
}
