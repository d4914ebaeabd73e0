#pragma once

#include <QByteArray>
#include <QString>
#include <QUrl>

class QNetworkReply;
class QNetworkRequest;

namespace loopscope::jupyterrest {

// Small shared pieces of the Jupyter Server REST API (kernels, kernelspecs) used by
// JupyterBackend and JupyterKernelChannel.

// "{base}/api/..." with the base's own path prefix kept (Enterprise Gateway or a base_url).
QUrl apiUrl(const QString &apiBase, const QString &path);
// ws:// or wss:// twin of apiUrl.
QUrl webSocketUrl(const QString &apiBase, const QString &path);
// `Authorization: token <t>` when a token is set.
void authorise(QNetworkRequest &request, const QString &token);
int httpStatus(const QNetworkReply *reply);
bool isUnauthorised(int status);
// "HTTP 404 Not Found: <message>" or the network error ("Connection refused").
QString describeFailure(const QNetworkReply *reply, const QByteArray &body);
// "Jupyter server at <base> rejected the token …abcd (unauthorised, HTTP 403 Forbidden: ...)"
QString unauthorisedMessage(const QString &apiBase, const QString &token,
                            const QNetworkReply *reply, const QByteArray &body);
QString unreachableMessage(const QString &apiBase, const QNetworkReply *reply);

} // namespace loopscope::jupyterrest
