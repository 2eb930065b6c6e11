#include <sys/prctl.h>
#include <sys/resource.h>

/* prctl is variadic, which Swift cannot call: one fixed-arity wrapper. */
static inline int kv_disable_core_dumps(void) {
    struct rlimit none = {0, 0};
    int a = setrlimit(RLIMIT_CORE, &none);
    int b = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    return (a == 0 && b == 0) ? 0 : -1;
}
