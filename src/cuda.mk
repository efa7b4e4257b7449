# CUDA part of libreducer (issue 9).  Empty until the GPU path lands.
