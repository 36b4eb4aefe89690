[#] start of __file__
dnl mpich-multichannel: configure part of the ch4:tcp netmod
dnl MPICH_SUBCFG_AFTER=src/mpid/ch4

AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
    AM_COND_IF([BUILD_CH4],[
        for net in $ch4_netmods ; do
            AS_CASE([$net],[tcp],[build_ch4_netmod_tcp=yes])
        done
    ])
    AM_CONDITIONAL([BUILD_CH4_NETMOD_TCP],[test "X$build_ch4_netmod_tcp" = "Xyes"])
])dnl

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[
AM_COND_IF([BUILD_CH4_NETMOD_TCP],[
    AC_MSG_NOTICE([RUNNING CONFIGURE FOR ch4:tcp])
    AC_CHECK_HEADERS([sys/epoll.h], [], [AC_MSG_ERROR([ch4:tcp needs epoll (Linux)])])
    dnl the connection handshake's MAC and nonces (tcp_auth.c)
    AC_CHECK_HEADERS([sodium.h], [],
        [AC_MSG_ERROR([ch4:tcp needs libsodium: apt-get install libsodium-dev])])
    AC_CHECK_LIB([sodium], [crypto_auth_verify], [PAC_LIBS_ADD([-lsodium])],
        [AC_MSG_ERROR([ch4:tcp needs libsodium: apt-get install libsodium-dev])])
    AC_DEFINE(HAVE_CH4_NETMOD_TCP, 1, [ch4:tcp netmod is built])
    AC_DEFINE(MPIDI_BUILD_CH4_LOCALITY_INFO, 1, [CH4 should build locality info])
])dnl end AM_COND_IF(BUILD_CH4_NETMOD_TCP,...)
])dnl end _BODY

[#] end of __file__
