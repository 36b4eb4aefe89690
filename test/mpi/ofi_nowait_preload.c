/*
 * LD_PRELOAD library for the ch4:ofi tests: a libfabric provider without wait
 * objects.  Every domain of a fabric MPICH opens refuses a completion queue
 * with a wait object (FI_WAIT_FD, ...) as such providers do (-FI_ENOSYS), so
 * the wait that sleeps has no fd to wait on.  The fabrics a utility provider
 * opens inside libfabric (rxm over tcp) are left alone: rxm gives its own
 * queues a wait object when MPICH's counter has one (4.0.2 always asks), and
 * refusing those would fail MPI_Init, a provider no MPICH could run on.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

typedef int (*fabric_fn) (struct fi_fabric_attr *, struct fid_fabric **, void *);
typedef int (*domain_fn) (struct fid_fabric *, struct fi_info *, struct fid_domain **, void *);
typedef int (*cq_open_fn) (struct fid_domain *, struct fi_cq_attr *, struct fid_cq **, void *);

/* each fabric and domain gets its own copy of its table, the real entry
 * beside it */
struct fabric_ops {
    struct fi_ops_fabric ops;
    domain_fn real_domain;
};
struct domain_ops {
    struct fi_ops_domain ops;
    cq_open_fn real_cq_open;
};

static int cq_open_nowait(struct fid_domain *domain, struct fi_cq_attr *attr,
                          struct fid_cq **cq, void *context)
{
    if (attr->wait_obj != FI_WAIT_NONE)
        return -FI_ENOSYS;
    return ((struct domain_ops *) domain->ops)->real_cq_open(domain, attr, cq, context);
}

static int domain_nowait(struct fid_fabric *fabric, struct fi_info *info,
                         struct fid_domain **domain, void *context)
{
    int ret = ((struct fabric_ops *) fabric->ops)->real_domain(fabric, info, domain, context);
    struct domain_ops *d;
    if (ret == FI_SUCCESS && (d = malloc(sizeof(*d)))) {
        d->ops = *(*domain)->ops;
        d->real_cq_open = d->ops.cq_open;
        d->ops.cq_open = cq_open_nowait;
        (*domain)->ops = &d->ops;
    }
    return ret;
}

/* whether the call came from inside libfabric (the object that holds real) */
static int from_libfabric(const void *caller, const void *real)
{
    Dl_info c, r;
    return dladdr(caller, &c) && dladdr(real, &r) && c.dli_fbase == r.dli_fbase;
}

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    fabric_fn real = (fabric_fn) dlsym(RTLD_NEXT, "fi_fabric");
    int ret = real ? real(attr, fabric, context) : -FI_ENOSYS;
    struct fabric_ops *f;
    if (ret == FI_SUCCESS && !from_libfabric(__builtin_return_address(0), (const void *) real)
        && (f = malloc(sizeof(*f)))) {
        f->ops = *(*fabric)->ops;
        f->real_domain = f->ops.domain;
        f->ops.domain = domain_nowait;
        (*fabric)->ops = &f->ops;
    }
    return ret;
}
