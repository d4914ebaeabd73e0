#include "sandbox/remote/jupyterrest.h"

#include "inspect/credentialpolicy.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace loopscope::jupyterrest {

QUrl apiUrl(const QString &apiBase, const QString &path) {
    QString base = apiBase.trimmed();
    while (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    return QUrl(base + path);
}

QUrl webSocketUrl(const QString &apiBase, const QString &path) {
    QUrl url = apiUrl(apiBase, path);
    url.setScheme(url.scheme() == QLatin1String("https") ? QStringLiteral("wss")
                                                         : QStringLiteral("ws"));
    return url;
}

void authorise(QNetworkRequest &request, const QString &token) {
    // Jupyter Server answers a good token with a login cookie; replaying it would let a later
    // request with a wrong token pass. Every request carries its own token and nothing else.
    request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
    request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
    if (!token.isEmpty())
        request.setRawHeader("Authorization", "token " + token.toUtf8());
}

int httpStatus(const QNetworkReply *reply) {
    return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

bool isUnauthorised(int status) {
    return status == 401 || status == 403;
}

QString describeFailure(const QNetworkReply *reply, const QByteArray &body) {
    const int status = httpStatus(reply);
    if (status == 0)
        return reply->errorString();
    QString message;
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    if (doc.isObject())
        message = doc.object().value(QLatin1String("message")).toString();
    if (message.isEmpty())
        message = QString::fromUtf8(body.left(300)).simplified();
    const QString reason = reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString();
    QString text = QStringLiteral("HTTP %1").arg(status);
    if (!reason.isEmpty())
        text += QLatin1Char(' ') + reason;
    if (!message.isEmpty())
        text += QStringLiteral(": ") + message;
    return text;
}

QString unauthorisedMessage(const QString &apiBase, const QString &token,
                            const QNetworkReply *reply, const QByteArray &body) {
    return QStringLiteral("Jupyter server at %1 rejected the token %2 (unauthorised, %3)")
        .arg(apiBase, token.isEmpty() ? QStringLiteral("(none)") : CredentialPolicy::mask(token),
             describeFailure(reply, body));
}

QString unreachableMessage(const QString &apiBase, const QNetworkReply *reply) {
    return QStringLiteral("cannot reach Jupyter server at %1: %2")
        .arg(apiBase, reply->errorString());
}

} // namespace loopscope::jupyterrest
