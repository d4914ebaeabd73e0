#pragma once

#include "sandbox/local/localsandboxoptions.h"

#include <sys/resource.h>
#include <sys/types.h>

namespace loopscope {

// What a process that becomes a sandbox tree (a bwrap per sandbox, or the zygote) does between
// fork and exec, in QProcess's child modifier: its own session, a lower priority if asked, first
// in line for the OOM killer, the sandbox uid when the app runs as root, death with its parent,
// no_new_privs and the rlimits. Built before the fork; apply() makes only async-signal-safe calls.
struct SandboxChildSetup {
    // `cpuLimit` false leaves RLIMIT_CPU alone (the zygote: its sandboxes set their own, since
    // the limit counts per process and the zygote lives for hours).
    static SandboxChildSetup fromOptions(const LocalSandboxOptions &options, int nice,
                                         bool cpuLimit = true);

    bool dropPrivileges = false;
    uid_t uid = 0;
    gid_t gid = 0;
    int nice = 0;
    rlim_t memory = 0;
    rlim_t cpu = 0; // 0: not set
    rlim_t fileSize = 0;
    rlim_t openFiles = 0;
    int fdLimit = 65536; // the highest descriptor markInheritedCloseOnExec's fallback visits

    // In the child. Exits with 126 rather than run anything as root when the uid switch fails.
    void apply() const;
};

} // namespace loopscope
