# Site profile of the emulated cluster (jobscripts/emulated/start), read by
# jobscripts/lib.sh when RB_SITE_PROFILE names this file (the cluster's env
# file sets it).  What a cluster's admins would put in a module for the job
# scripts: the site's name, whether its nodes have GPUs, how mpirun places
# ranks.  The MPI library's own settings (TCP over eth0, no binding) come
# from the nodes themselves (the TaskProlog), so plain srun gets them too.
RB_SITE_NAME="emulated cluster ${RB_EMUL_DIR:-/tmp/rb-emul}"
# The p100 partition's GPUs are fake devices: the scripts run on the host.
RB_SITE_NO_GPU=1
# RB_LAUNCHER=mpirun: one rank per node in turn, unbound (the nodes share
# this machine's cores).
: "${RB_MPIRUN_ARGS:=--map-by node --bind-to none}"
