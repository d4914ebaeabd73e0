#pragma once
// The dialect samples in tests/fixtures/dialects, for the tests that read them: where they are,
// a file's bytes, and the dialect a file's prefix names.
#include "conversation/dialectkind.h"

#include <QFile>
#include <QString>

namespace loopscope::fixtures {

inline QString fixtureDir() {
    return qEnvironmentVariable("LOOPSCOPE_SOURCE_DIR") +
           QStringLiteral("/tests/fixtures/dialects");
}

inline QByteArray readFile(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return file.readAll();
}

// `chat-…` Chat Completions, `messages-…` Messages, anything else Responses.
inline Dialect dialectOfFixture(const QString &name) {
    if (name.startsWith(QLatin1String("chat-")))
        return Dialect::ChatCompletions;
    if (name.startsWith(QLatin1String("messages-")))
        return Dialect::Messages;
    return Dialect::Responses;
}

} // namespace loopscope::fixtures
