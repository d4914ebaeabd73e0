#include "inspect/textformat.h"

#include "inspect/credentialpolicy.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

namespace loopscope::textformat {

QString formatDuration(double ms) {
    if (ms < 0 || std::isnan(ms))
        return QStringLiteral("…");
    if (ms == 0)
        return QStringLiteral("0 ms");
    if (ms < 10)
        return QStringLiteral("%1 ms").arg(ms, 0, 'f', 1);
    if (ms < 999.5)
        return QStringLiteral("%1 ms").arg(qRound64(ms));
    const double s = ms / 1000.0;
    // Seconds with up to 2 (then 1) decimals, trailing zeros dropped: "5 s", "1.5 s", "1.23 s".
    const auto seconds = [](double value, int decimals) -> QString {
        QString text = QString::number(value, 'f', decimals);
        while (text.endsWith(u'0'))
            text.chop(1);
        if (text.endsWith(u'.'))
            text.chop(1);
        return text + QStringLiteral(" s");
    };
    if (s < 9.995)
        return seconds(s, 2);
    if (s < 59.95)
        return seconds(s, 1);
    const qint64 whole = qint64(s); // below an hour: minutes and seconds, the seconds cut off
    if (whole < 3600)
        return QStringLiteral("%1 min %2 s")
            .arg(whole / 60)
            .arg(whole % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 h %2 min")
        .arg(whole / 3600)
        .arg((whole % 3600) / 60, 2, 10, QLatin1Char('0'));
}

QString plural(qint64 n, const QString &word, const QString &pluralWord) {
    const QString many = pluralWord.isEmpty() ? word + u's' : pluralWord;
    return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? word : many);
}

QString maskedIdentity(const QString &keyOrMasked) {
    const QChar ellipsis(0x2026);
    // ProxyServer names a caller without a key "anonymous"; masked, that reads "…mous".
    if (keyOrMasked.isEmpty() || keyOrMasked == QLatin1String("anonymous") ||
        keyOrMasked == QString(ellipsis) + QStringLiteral("mous"))
        return QCoreApplication::translate("loopscope::textformat", "no key");
    if (keyOrMasked.startsWith(ellipsis))
        return keyOrMasked.left(5); // already masked: at most the last 4 stay
    return CredentialPolicy::mask(keyOrMasked);
}

QString prettyJson(const QJsonValue &value) {
    if (value.isObject())
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Indented))
            .trimmed();
    if (value.isArray())
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Indented))
            .trimmed();
    if (value.isString())
        return value.toString();
    if (value.isNull() || value.isUndefined())
        return {};
    // A number or a boolean exactly as JSON writes it.
    return QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact))
        .mid(1)
        .chopped(1);
}

} // namespace loopscope::textformat
