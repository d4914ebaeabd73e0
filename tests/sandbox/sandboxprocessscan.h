#pragma once

#include "sandbox/local/bubblewrapcommand.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QStringList>

namespace loopscope::test {

// Processes left over by this test process's sandboxes, found in /proc: live processes whose
// command line carries BubblewrapCommand::processMarker() (bwrap, its init and every python and
// fork of it inside), plus zombie children of ours. Empty means "no sandbox process of ours".
inline QStringList sandboxLeftovers() {
    const QByteArray marker = BubblewrapCommand::processMarker().toLatin1();
    const QByteArray self = QByteArray::number(QCoreApplication::applicationPid());
    QStringList found;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &pid : entries) {
        bool numeric = false;
        pid.toLongLong(&numeric);
        if (!numeric || pid == QString::fromLatin1(self))
            continue;
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
        if (!cmdline.open(QIODevice::ReadOnly) || !stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray args = cmdline.readAll();
        const QByteArray statLine = stat.readAll();
        // stat: "pid (comm) S ppid ..."; comm may contain spaces, so split after the last ')'.
        const QList<QByteArray> fields = statLine.mid(statLine.lastIndexOf(')') + 2).split(' ');
        const bool zombieChild = fields.size() > 1 && fields.at(0) == "Z" && fields.at(1) == self;
        if (args.contains(marker) || zombieChild)
            found << pid + QStringLiteral(" ") +
                         QString::fromLatin1(args.left(60).replace('\0', ' ')) +
                         (zombieChild ? QStringLiteral(" <zombie>") : QString());
    }
    return found;
}

inline bool processExists(qint64 pid) {
    if (pid <= 0)
        return false;
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray line = stat.readAll();
    return line.mid(line.lastIndexOf(')') + 2, 1) != "Z";
}

} // namespace loopscope::test
