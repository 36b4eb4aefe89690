## mpich-multichannel: polling arbiter (included from src/mpid/ch4/Makefile.mk by maint/overlay)

AM_CPPFLAGS += -I$(top_srcdir)/src/mpid/ch4/poll

noinst_HEADERS += src/mpid/ch4/poll/poll_policy.h \
                  src/mpid/ch4/poll/poll_wake.h \
                  src/mpid/ch4/poll/ch4_poll.h

mpi_core_sources += src/mpid/ch4/poll/poll_policy.c \
                    src/mpid/ch4/poll/poll_wake.c \
                    src/mpid/ch4/poll/ch4_poll.c \
                    src/mpid/ch4/poll/ch4_wake.c

# ch4:ucx's event fd in the wait that sleeps
if BUILD_CH4_NETMOD_UCX
noinst_HEADERS += src/mpid/ch4/poll/ch4_wake_ucx.h
mpi_core_sources += src/mpid/ch4/poll/ch4_wake_ucx.c
endif
# ch4:ofi's completion-queue fd in the wait that sleeps
if BUILD_CH4_NETMOD_OFI
noinst_HEADERS += src/mpid/ch4/poll/ch4_wake_ofi.h
mpi_core_sources += src/mpid/ch4/poll/ch4_wake_ofi.c
endif
