#pragma once

// The scheduling policy of this process's thread with the given name (Qt names its threads
// after their objectName; the kernel keeps the first 15 bytes), or -1 when there is none.
// Linux only: reads /proc/self/task.
#include <QDir>
#include <QFile>
#include <QString>

#include <sched.h>

namespace loopscope::test {

inline int schedulingPolicyOfThread(const QString &name) {
    const QString comm15 = name.left(15);
    const QDir tasks(QStringLiteral("/proc/self/task"));
    for (const QString &tid : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile comm(tasks.filePath(tid + QStringLiteral("/comm")));
        if (comm.open(QIODevice::ReadOnly) && QString::fromUtf8(comm.readAll()).trimmed() == comm15)
            return ::sched_getscheduler(tid.toInt());
    }
    return -1;
}

} // namespace loopscope::test
