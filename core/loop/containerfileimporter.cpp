#include "loop/containerfileimporter.h"

#include "common/futurechain.h"
#include "upstream/upstreamclient.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <QUrl>

namespace loopscope {

namespace {

using Imported = Outcome<QList<ContainerFile>>;

struct ImportJob {
    UpstreamRoute route;
    SandboxEntry container;
    QStringList fileIds;
    qsizetype next = 0;
    QList<ContainerFile> done;
    std::shared_ptr<QPromise<Imported>> promise;
};

} // namespace

ContainerFileImporter::ContainerFileImporter(UpstreamClient *upstream, ContainerFileStore *store,
                                             QObject *parent)
    : QObject(parent)
    , m_upstream(upstream)
    , m_store(store) {}

QString ContainerFileImporter::safeFileName(const QString &name, const QString &fallback) {
    QString base = name.section(u'/', -1).section(u'\\', -1).trimmed();
    base.remove(QChar(0));
    if (base.isEmpty() || base == QLatin1String(".") || base == QLatin1String(".."))
        return fallback;
    return base.left(200);
}

QFuture<Outcome<QByteArray>> ContainerFileImporter::get(const UpstreamRoute &route,
                                                        const QString &path) {
    if (!m_upstream)
        return QtFuture::makeReadyFuture(
            Outcome<QByteArray>::failure(QStringLiteral("no upstream client")));
    auto promise = startedPromise<Outcome<QByteArray>>();
    QNetworkReply *reply = m_upstream->send(route, "GET", path, {});
    connect(reply, &QNetworkReply::downloadProgress, reply, [reply](qint64 received, qint64) {
        if (received > kMaxFileBytes)
            reply->abort();
    });
    connect(reply, &QNetworkReply::finished, this, [reply, promise, path] {
        reply->deleteLater();
        const int status = UpstreamClient::httpStatus(reply);
        const QByteArray body = reply->readAll();
        if (status >= 200 && status < 300 && body.size() <= kMaxFileBytes) {
            finishPromise(promise, Outcome<QByteArray>::success(body));
            return;
        }
        QString why =
            status == 0
                ? reply->errorString()
                : QStringLiteral("HTTP %1: %2").arg(status).arg(QString::fromUtf8(body.left(300)));
        if (body.size() > kMaxFileBytes || reply->error() == QNetworkReply::OperationCanceledError)
            why = QStringLiteral("the file is larger than %1 bytes").arg(kMaxFileBytes);
        finishPromise(promise, Outcome<QByteArray>::failure(why));
    });
    return promise->future();
}

QFuture<Outcome<QList<ContainerFile>>> ContainerFileImporter::import(const UpstreamRoute &route,
                                                                     const SandboxEntry &container,
                                                                     const QStringList &fileIds) {
    auto job = std::make_shared<ImportJob>();
    job->route = route;
    job->container = container;
    job->fileIds = fileIds;
    job->promise = startedPromise<Imported>();
    const QFuture<Imported> result = job->promise->future();

    auto step = std::make_shared<std::function<void()>>();
    // The step holds itself only through a weak reference: no cycle outlives the import.
    std::weak_ptr<std::function<void()>> weakStep = step;
    *step = [this, job, weakStep] {
        if (job->next >= job->fileIds.size()) {
            finishPromise(job->promise, Imported::success(job->done));
            return;
        }
        const QString id = job->fileIds.at(job->next);
        const auto fail = [job, id](const QString &why) {
            finishPromise(job->promise,
                          Imported::failure(QStringLiteral("could not copy file '%1' into the "
                                                           "container: %2")
                                                .arg(id, why)));
        };
        const auto keep = weakStep.lock();
        // The bytes into the sandbox, noted as a "user" file; then the next id.
        const auto write = [this, job, fail, keep](const QString &name, const QByteArray &bytes) {
            SandboxBackend *backend = job->container.backend;
            if (!backend) {
                fail(QStringLiteral("the sandbox backend is gone"));
                return;
            }
            const QString path = sandboxDataDir() + u'/' + name;
            whenFinished(
                backend->writeFile(job->container.handle, path, bytes,
                                   job->container.params.value_or(SandboxParams{})),
                this, [this, job, fail, keep](const QFuture<Outcome<SandboxFileInfo>> &w) {
                    const Outcome<SandboxFileInfo> written =
                        resultOr(w, Outcome<SandboxFileInfo>::failure(QStringLiteral("cancelled")));
                    if (!written.ok()) {
                        fail(written.error);
                        return;
                    }
                    if (m_store)
                        job->done.append(m_store->noteWritten(
                            job->container.handle.id, written.value, QStringLiteral("user")));
                    ++job->next;
                    (*keep)();
                });
        };
        if (const auto local = m_localFiles ? m_localFiles(id) : std::nullopt) {
            // A container file Loopscope itself holds: read from its sandbox.
            if (!local->first.backend) {
                fail(QStringLiteral("the sandbox backend is gone"));
                return;
            }
            if (local->first.handle.id == job->container.handle.id) { // already there
                ++job->next;
                (*keep)();
                return;
            }
            const QString name = local->second.fileName();
            whenFinished(
                local->first.backend->readFile(local->first.handle, local->second.path,
                                               local->first.params.value_or(SandboxParams{})),
                this, [fail, write, name](const QFuture<Outcome<QByteArray>> &read) {
                    const Outcome<QByteArray> bytes =
                        resultOr(read, Outcome<QByteArray>::failure(QStringLiteral("cancelled")));
                    if (bytes.ok())
                        write(name, bytes.value);
                    else
                        fail(bytes.error);
                });
            return;
        }
        const QString encoded = QString::fromUtf8(QUrl::toPercentEncoding(id));
        whenFinished(
            get(job->route, QStringLiteral("/files/") + encoded), this,
            [this, job, id, encoded, fail, write](const QFuture<Outcome<QByteArray>> &meta) {
                const Outcome<QByteArray> info =
                    resultOr(meta, Outcome<QByteArray>::failure(QStringLiteral("cancelled")));
                if (!info.ok()) {
                    fail(info.error);
                    return;
                }
                const QString name = safeFileName(QJsonDocument::fromJson(info.value)
                                                      .object()
                                                      .value(QStringLiteral("filename"))
                                                      .toString(),
                                                  id);
                whenFinished(
                    get(job->route,
                        QStringLiteral("/files/") + encoded + QStringLiteral("/content")),
                    this, [fail, write, name](const QFuture<Outcome<QByteArray>> &content) {
                        const Outcome<QByteArray> bytes = resultOr(
                            content, Outcome<QByteArray>::failure(QStringLiteral("cancelled")));
                        if (bytes.ok())
                            write(name, bytes.value);
                        else
                            fail(bytes.error);
                    });
            });
    };
    (*step)();
    return result;
}

} // namespace loopscope
