## mpich-multichannel: the CMA single-copy IPC type (included from
## src/mpid/ch4/shm/ipc/Makefile.mk by maint/overlay)

noinst_HEADERS += src/mpid/ch4/shm/ipc/cma/cma_pre.h \
                  src/mpid/ch4/shm/ipc/cma/cma_post.h \
                  src/mpid/ch4/shm/ipc/cma/cma_policy.h

mpi_core_sources += src/mpid/ch4/shm/ipc/cma/cma_init.c \
                    src/mpid/ch4/shm/ipc/cma/cma_copy.c \
                    src/mpid/ch4/shm/ipc/cma/cma_recv.c \
                    src/mpid/ch4/shm/ipc/cma/cma_send.c \
                    src/mpid/ch4/shm/ipc/cma/cma_policy.c
