#include "common/randomid.h"

#include <QRandomGenerator>

namespace loopscope {

QString randomHex128() {
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    QString out;
    out.reserve(32);
    for (const quint32 w : words)
        out += QStringLiteral("%1").arg(w, 8, 16, QLatin1Char('0'));
    return out;
}

QString randomId(const char *prefix) {
    return QLatin1String(prefix) + randomHex128();
}

} // namespace loopscope
