/* hwloc topology for the archive, and binding by local rank (topology.h). */
#include "topology.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

#include "bench_fail.h"
#include "h5attr.h"
#include "reducer.h"

/* What this process knows about its placement (process-wide state, as the
 * binding itself is). */
static struct {
    int local_rank, local_size;
    char source[32];           /* where the local rank came from */
    bench_bind_mode mode;
    char target[32];           /* "core 3", "package 0", "none" */
} placement = {-1, -1, "", BENCH_BIND_NONE, "none"};

int bench_bind_parse(const char *s, bench_bind_mode *mode)
{
    static const char *const names[] = {"none", "core", "socket"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *mode = (bench_bind_mode)i;
            return 0;
        }
    return -1;
}

const char *bench_bind_name(bench_bind_mode mode)
{
    return mode == BENCH_BIND_CORE ? "core" : mode == BENCH_BIND_SOCKET ? "socket" : "none";
}

const char *bench_hwloc_version(void)
{
#ifdef HAVE_HWLOC
    return HWLOC_VERSION;
#else
    return "not built";
#endif
}

/* Collective: local rank and node size (rb_node_rank: the launcher's local
 * rank when it is valid on the node; never SLURM_PROCID). */
static void find_local_rank(MPI_Comm comm)
{
    const char *source = NULL;
    if (rb_node_rank(comm, &placement.local_rank, &placement.local_size, &source) != RB_OK) {
        placement.local_rank = 0;    /* fails on every rank alike: no memory */
        placement.local_size = 1;
        source = "unknown";
    }
    snprintf(placement.source, sizeof placement.source, "%s", source);
}

#ifdef HAVE_HWLOC
static int bind_local(bench_bind_mode mode, char *msg, size_t len)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
        snprintf(msg, len, "hwloc cannot load the topology");
        return -1;
    }
    hwloc_obj_type_t type = mode == BENCH_BIND_CORE ? HWLOC_OBJ_CORE : HWLOC_OBJ_PACKAGE;
    int nobj = hwloc_get_nbobjs_by_type(topo, type);
    /* Cores: packed, wrapping when oversubscribed.  Packages: shared out
     * evenly, so ranks 0..n/2-1 share the first of two packages. */
    int idx = nobj <= 0 ? -1
            : mode == BENCH_BIND_CORE ? placement.local_rank % nobj
            : (int)((long)placement.local_rank * nobj / placement.local_size);
    hwloc_obj_t obj = idx >= 0 ? hwloc_get_obj_by_type(topo, type, (unsigned)idx) : NULL;
    int rc = -1;
    if (!obj)
        snprintf(msg, len, "hwloc finds no %s on this node", mode == BENCH_BIND_CORE ? "core" : "package");
    else if (hwloc_set_cpubind(topo, obj->cpuset, HWLOC_CPUBIND_PROCESS))
        snprintf(msg, len, "hwloc_set_cpubind to %s %d failed", hwloc_obj_type_string(type), idx);
    else {
        snprintf(placement.target, sizeof placement.target, "%s %d",
                 mode == BENCH_BIND_CORE ? "core" : "package", idx);
        rc = 0;
    }
    hwloc_topology_destroy(topo);
    return rc;
}
#else
static int bind_local(bench_bind_mode mode, char *msg, size_t len)
{
    (void)mode;
    snprintf(msg, len, "reducerbench was built without hwloc (configure found no hwloc.h)");
    return -1;
}
#endif

int bench_bind(MPI_Comm comm, bench_bind_mode mode)
{
    find_local_rank(comm);
    placement.mode = mode;
    char msg[256] = "";
    int rc = (mode == BENCH_BIND_NONE ? 0 : bind_local(mode, msg, sizeof msg)) != 0;
    int rank, rank0_failed = rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Bcast(&rank0_failed, 1, MPI_INT, 0, comm);
    /* One message when every rank fails alike (rank 0's), else each. */
    char what[64];
    snprintf(what, sizeof what, "--bind %s", bench_bind_name(mode));
    if (rc && (rank == 0 || !rank0_failed))
        bench_fail(BENCH_NO_CODE, what, "%s", msg);
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, comm);
    if (rc)   /* named by the ranks that failed */
        bench_fail_on(0, BENCH_NO_CODE, what, "%s", msg);
    return rc;
}

/* ---------------------------------------------------------- recording */

/* One row of /topology/binding. */
typedef struct binding_row {
    int32_t rank, local_rank, local_size;
    char local_rank_source[32];
    char host[64];
    char mode[16];
    char target[32];
    char cpuset[128];          /* CPUs this rank may run on, e.g. "0-3,8" */
    int32_t gpu;               /* local rank mod GPUs on rank 0's node, -1 none */
} binding_row;

/* Linux CPU list of the current affinity mask. */
static void affinity_list(char *buf, size_t len)
{
    cpu_set_t set;
    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set)) {
        snprintf(buf, len, "unknown");
        return;
    }
    size_t off = 0;
    for (int c = 0; c < CPU_SETSIZE && off < len; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            last++;
        off += (size_t)(last > c ? snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", c, last)
                                 : snprintf(buf + off, len - off, "%s%d", off ? "," : "", c));
        c = last;
    }
}

#define FIELD(member, kind) BENCH_H5_FIELD(binding_row, member, kind)
static const bench_h5_field binding_fields[] = {
    FIELD(rank, BENCH_H5_INT32), FIELD(local_rank, BENCH_H5_INT32), FIELD(local_size, BENCH_H5_INT32),
    FIELD(local_rank_source, BENCH_H5_CHARS), FIELD(host, BENCH_H5_CHARS), FIELD(mode, BENCH_H5_CHARS),
    FIELD(target, BENCH_H5_CHARS), FIELD(cpuset, BENCH_H5_CHARS), FIELD(gpu, BENCH_H5_INT32),
};
#undef FIELD

static int write_binding(hid_t group, const binding_row *rows, int p)
{
    return bench_h5_table(group, "binding", binding_fields, sizeof binding_fields / sizeof *binding_fields,
                       sizeof *rows, rows, (size_t)p,
                       "one row per rank: local rank (and where it came from), host, --bind mode, "
                       "object bound to, CPUs the rank may run on when the archive was opened");
}

#ifdef HAVE_HWLOC
static int count_type(hwloc_topology_t topo, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);
    return n < 0 ? 0 : n;
}

/* Summary attributes of rank 0's node, the XML document; *ngpus out. */
/* The caches' counts and sizes, the memory and the CPU model. */
static int write_caches_memory(hid_t g, hwloc_topology_t topo)
{
    static const struct { hwloc_obj_type_t type; const char *name; } caches[] = {
        {HWLOC_OBJ_L1CACHE, "l1d"}, {HWLOC_OBJ_L1ICACHE, "l1i"}, {HWLOC_OBJ_L2CACHE, "l2"},
        {HWLOC_OBJ_L3CACHE, "l3"}, {HWLOC_OBJ_L4CACHE, "l4"},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof caches / sizeof *caches; i++) {
        char name[48];
        hwloc_obj_t c = hwloc_get_obj_by_type(topo, caches[i].type, 0);
        snprintf(name, sizeof name, "%s_caches", caches[i].name);
        rc |= bench_h5_attr_int(g, name, count_type(topo, caches[i].type));
        snprintf(name, sizeof name, "%s_cache_bytes", caches[i].name);
        rc |= bench_h5_attr_u64(g, name, c && c->attr ? (unsigned long long)c->attr->cache.size : 0);
    }
    hwloc_obj_t root = hwloc_get_root_obj(topo);
    rc |= bench_h5_attr_u64(g, "memory_bytes", (unsigned long long)root->total_memory);
    const char *model = NULL;
    hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
    if (pkg)
        model = hwloc_obj_get_info_by_name(pkg, "CPUModel");
    return rc | bench_h5_attr_str(g, "cpu_model", model ? model : "");
}

/* OS devices: names of GPU-like ones (cuda0, nvml0, card0...) and all;
 * the GPUs (*ngpus) counted as PCI devices (one per board; a GPU has
 * several OS devices): 3D controllers, and display controllers of GPU
 * vendors. */
static int write_devices(hid_t g, hwloc_topology_t topo, int *ngpus)
{
    char gpus[1024] = "", osdevs[4096] = "";
    size_t go = 0, oo = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(topo, o)) != NULL;) {
        if ((o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU || o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
            && go < sizeof gpus)
            go += (size_t)snprintf(gpus + go, sizeof gpus - go, "%s%s", go ? "," : "", o->name);
        if (oo < sizeof osdevs)
            oo += (size_t)snprintf(osdevs + oo, sizeof osdevs - oo, "%s%s", oo ? "," : "", o->name);
    }
    *ngpus = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(topo, o)) != NULL;) {
        unsigned cls = o->attr->pcidev.class_id, vendor = o->attr->pcidev.vendor_id;
        *ngpus += cls == 0x0302 || (cls == 0x0300 && (vendor == 0x10de || vendor == 0x1002));
    }
    return bench_h5_attr_int(g, "gpus", *ngpus) | bench_h5_attr_str(g, "gpu_devices", gpus) |
           bench_h5_attr_str(g, "os_devices", osdevs);
}

static int write_hwloc(hid_t g, int *ngpus)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo))
        return -1;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo)) {
        hwloc_topology_destroy(topo);
        return -1;
    }
    int rc = bench_h5_attr_int(g, "available", 1);
    rc |= bench_h5_attr_str(g, "reason", "");
    rc |= bench_h5_attr_int(g, "packages", count_type(topo, HWLOC_OBJ_PACKAGE));
    rc |= bench_h5_attr_int(g, "cores", count_type(topo, HWLOC_OBJ_CORE));
    rc |= bench_h5_attr_int(g, "pus", count_type(topo, HWLOC_OBJ_PU));
    rc |= bench_h5_attr_int(g, "numa_nodes", count_type(topo, HWLOC_OBJ_NUMANODE));
    rc |= write_caches_memory(g, topo);
    rc |= write_devices(g, topo, ngpus);
    char *xml = NULL;
    int xlen = 0;
    if (hwloc_topology_export_xmlbuffer(topo, &xml, &xlen, 0) == 0) {
        rc |= bench_h5_dataset_str(g, "xml", xml);
        hwloc_free_xmlbuffer(topo, xml);
    } else {
        rc = -1;
    }
    hwloc_topology_destroy(topo);
    return rc;
}
#else
static int write_hwloc(hid_t g, int *ngpus)
{
    *ngpus = 0;
    int rc = bench_h5_attr_int(g, "available", 0);
    rc |= bench_h5_attr_str(g, "reason", "reducerbench was built without hwloc (configure found no hwloc.h)");
    return rc;
}
#endif

int bench_topology_write(MPI_Comm comm, int root, hid_t file)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (placement.local_rank < 0)
        find_local_rank(comm);
    binding_row mine;
    memset(&mine, 0, sizeof mine);
    mine.rank = rank;
    mine.local_rank = placement.local_rank;
    mine.local_size = placement.local_size;
    snprintf(mine.local_rank_source, sizeof mine.local_rank_source, "%s", placement.source);
    gethostname(mine.host, sizeof mine.host - 1);
    snprintf(mine.mode, sizeof mine.mode, "%s", bench_bind_name(placement.mode));
    snprintf(mine.target, sizeof mine.target, "%s", placement.target);
    affinity_list(mine.cpuset, sizeof mine.cpuset);
    binding_row *all = rank == root ? calloc((size_t)p, sizeof *all) : NULL;
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, root, comm);
    int rc = 0;
    if (rank == root) {
        hid_t g = bench_h5_group(file, "/topology");
        int ngpus = 0;
        rc = g >= 0 && all ? write_hwloc(g, &ngpus) : -1;
        for (int r = 0; all && r < p; r++)
            all[r].gpu = ngpus > 0 ? all[r].local_rank % ngpus : -1;
        if (g >= 0 && all)
            rc |= write_binding(g, all, p);
        if (g >= 0)
            H5Gclose(g);
        free(all);
    }
    MPI_Bcast(&rc, 1, MPI_INT, root, comm);
    return rc;
}
