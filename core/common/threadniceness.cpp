#include "common/threadniceness.h"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace loopscope {

bool setCurrentThreadNiceness(int niceness) {
#if defined(__linux__)
    // On Linux, PRIO_PROCESS with a thread id sets that thread's nice value alone.
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    return ::setpriority(PRIO_PROCESS, tid, niceness) == 0;
#else
    (void)niceness;
    return false;
#endif
}

} // namespace loopscope
