#!/bin/sh
# Install (as root, with apt) what reducerbench needs to build, test and run
# on Debian 12; only packages that are missing are installed.
set -eu
pkgs="build-essential autoconf automake autoconf-archive pkg-config
libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools zlib1g-dev
libpapi-dev papi-tools libhwloc-dev hwloc libopenblas-dev
python3-h5py python3-numpy python3-pandas python3-matplotlib python3-mpi4py python3-scipy python3-pytest
python3-torch python3-torchvision python3-dev libtool
dataset-fashion-mnist fortunes fortunes-min dict-gcide
slurmctld slurmd slurm-client munge libsimgrid-dev
chromium"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages:$missing; run as root or install them" >&2
    exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
