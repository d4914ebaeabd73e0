#include "control/controltoken.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QStandardPaths>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loopscope {

QByteArray ControlToken::generate() {
    QByteArray bytes(32, Qt::Uninitialized);
    // QRandomGenerator::system() reads the kernel's CSPRNG (getrandom).
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()),
                                          bytes.size() / int(sizeof(quint32)));
    return bytes.toHex();
}

QString ControlToken::defaultDataDir() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

bool ControlToken::writeFile(const QString &path, const QByteArray &token, QString *error) {
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath())) {
        if (error)
            *error = QStringLiteral("cannot create %1").arg(info.absolutePath());
        return false;
    }
    // A fresh file created 0600 and renamed over the old one: the token is never readable by
    // others, not even for a moment, and a reader sees the old or the new token, whole.
    const QByteArray tmp = QFile::encodeName(path + QStringLiteral(".tmp"));
    ::unlink(tmp.constData());
    const int fd = ::open(tmp.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2")
                         .arg(path, QString::fromLocal8Bit(strerror(errno)));
        return false;
    }
    const QByteArray line = token + '\n';
    const bool written = ::write(fd, line.constData(), size_t(line.size())) == line.size();
    ::fchmod(fd, 0600);
    ::close(fd);
    if (!written || ::rename(tmp.constData(), QFile::encodeName(path).constData()) != 0) {
        ::unlink(tmp.constData());
        if (error)
            *error = QStringLiteral("cannot write %1").arg(path);
        return false;
    }
    return true;
}

ControlToken ControlToken::resolve(const QString &commandLineToken, const QString &configToken,
                                   const QProcessEnvironment &environment, const QString &dataDir) {
    ControlToken result;
    const QString fromEnv = environment.value(QStringLiteral("LOOPSCOPE_CONTROL_TOKEN"));
    if (!commandLineToken.isEmpty()) {
        result.token = commandLineToken.toUtf8();
        result.source = Source::CommandLine;
    } else if (!fromEnv.isEmpty()) {
        result.token = fromEnv.toUtf8();
        result.source = Source::Environment;
    } else if (!configToken.isEmpty()) {
        result.token = configToken.toUtf8();
        result.source = Source::Config;
    } else {
        result.token = generate();
        result.source = Source::Generated;
        const QString dir = dataDir.isEmpty() ? defaultDataDir() : dataDir;
        result.filePath = QDir(dir).filePath(QStringLiteral("control-token"));
        if (!writeFile(result.filePath, result.token, &result.error))
            result.filePath.clear();
    }
    return result;
}

} // namespace loopscope
