## mpich-multichannel: the ch4:tcp netmod (included from src/mpid/ch4/netmod/Makefile.mk
## by maint/overlay; built with --with-device=ch4:tcp)

if BUILD_CH4_NETMOD_TCP

noinst_HEADERS += src/mpid/ch4/netmod/tcp/netmod_inline.h \
                  src/mpid/ch4/netmod/tcp/tcp_am.h \
                  src/mpid/ch4/netmod/tcp/tcp_auth.h \
                  src/mpid/ch4/netmod/tcp/tcp_impl.h \
                  src/mpid/ch4/netmod/tcp/tcp_noinline.h \
                  src/mpid/ch4/netmod/tcp/tcp_policy.h \
                  src/mpid/ch4/netmod/tcp/tcp_pre.h \
                  src/mpid/ch4/netmod/tcp/tcp_progress.h \
                  src/mpid/ch4/netmod/tcp/tcp_proto.h \
                  src/mpid/ch4/netmod/tcp/tcp_types.h

mpi_core_sources += src/mpid/ch4/netmod/tcp/func_table.c \
                    src/mpid/ch4/netmod/tcp/tcp_accept.c \
                    src/mpid/ch4/netmod/tcp/tcp_am.c \
                    src/mpid/ch4/netmod/tcp/tcp_auth.c \
                    src/mpid/ch4/netmod/tcp/tcp_conn.c \
                    src/mpid/ch4/netmod/tcp/tcp_dynamic.c \
                    src/mpid/ch4/netmod/tcp/tcp_handshake.c \
                    src/mpid/ch4/netmod/tcp/tcp_hooks.c \
                    src/mpid/ch4/netmod/tcp/tcp_init.c \
                    src/mpid/ch4/netmod/tcp/tcp_liveness.c \
                    src/mpid/ch4/netmod/tcp/tcp_policy.c \
                    src/mpid/ch4/netmod/tcp/tcp_progress.c \
                    src/mpid/ch4/netmod/tcp/tcp_rx.c \
                    src/mpid/ch4/netmod/tcp/tcp_sendq.c \
                    src/mpid/ch4/netmod/tcp/tcp_sock.c \
                    src/mpid/ch4/netmod/tcp/tcp_verify.c \
                    src/mpid/ch4/netmod/tcp/tcp_world.c

errnames_txt_files += src/mpid/ch4/netmod/tcp/errnames.txt

endif BUILD_CH4_NETMOD_TCP
