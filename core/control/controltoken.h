#pragma once

#include <QByteArray>
#include <QProcessEnvironment>
#include <QString>

namespace loopscope {

// The control API's bearer token (control-api.md "Access"). First match wins: --control-token,
// env LOOPSCOPE_CONTROL_TOKEN, general_settings.control_token; otherwise 32 random bytes (hex)
// minted at start and written to <data dir>/control-token with mode 0600, replaced each start,
// so a script on this machine (same user) can read it and nobody else can.
class ControlToken {
public:
    enum class Source { CommandLine, Environment, Config, Generated };

    QByteArray token;
    Source source = Source::Generated;
    QString filePath; // where a generated token was written (empty otherwise)
    QString error;    // the file could not be written (the token still works)

    // The tokens as given (empty = not given). `dataDir` empty → AppDataLocation.
    static ControlToken resolve(const QString &commandLineToken, const QString &configToken,
                                const QProcessEnvironment &environment, const QString &dataDir);
    // 32 bytes from the system CSPRNG as 64 hex characters.
    static QByteArray generate();
    // Writes `token` to `path` atomically with mode 0600 (created so, never widened).
    static bool writeFile(const QString &path, const QByteArray &token, QString *error);
    static QString defaultDataDir();
};

} // namespace loopscope
