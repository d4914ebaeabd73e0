#include "sandbox/remote/jupyterbackend.h"

#include "sandbox/sandboxfilecode.h"

#include "sandbox/remote/jupyterrest.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPromise>
#include <QUrl>
#include <QUrlQuery>

namespace loopscope {

namespace {
template<typename T> QFuture<T> ready(T value) {
    return QtFuture::makeReadyFuture(std::move(value));
}
const QString kNoBase = QStringLiteral(
    "Jupyter sandbox needs api_base (e.g. http://127.0.0.1:8888) in its sandbox_tools entry");
} // namespace

JupyterBackend::JupyterBackend(QObject *parent)
    : JupyterBackend(Options{}, parent) {}

JupyterBackend::JupyterBackend(const Options &options, QObject *parent)
    : SandboxBackend(parent)
    , m_options(options)
    , m_nam(new QNetworkAccessManager(this)) {
    m_lastProbe.available = true;
    m_lastProbe.warnings << QStringLiteral("jupyter: not checked yet (probe pending)");
}

JupyterBackend::~JupyterBackend() {
    // Settle in-flight create/delete/probe futures with an error rather than cancelling them;
    // the channels fail their queued runs when they are destroyed with us.
    for (const QPointer<JupyterKernelChannel> &channel : std::as_const(m_channels))
        if (channel)
            channel->shutdown(QStringLiteral("the Jupyter backend was shut down"));
    const auto replies = m_nam->findChildren<QNetworkReply *>();
    for (QNetworkReply *reply : replies)
        reply->abort();
}

SandboxSelfTest JupyterBackend::selfTest() const {
    return m_lastProbe;
}

QString JupyterBackend::tokenFor(const SandboxParams &params) const {
    return params.apiKey.isEmpty() ? qEnvironmentVariable("JUPYTER_TOKEN") : params.apiKey;
}

QString JupyterBackend::kernelFor(const SandboxParams &params) const {
    const QString fromBase =
        QUrlQuery(QUrl(params.apiBase).query()).queryItemValue(QStringLiteral("kernel_name"));
    return fromBase.isEmpty() ? m_options.kernelName : fromBase;
}

QString JupyterBackend::baseFor(const SandboxParams &params, const SandboxHandle *handle) const {
    QString base = params.apiBase;
    if (base.isEmpty() && handle)
        base = handle->details.value(QStringLiteral("apiBase")).toString();
    // "?kernel_name=..." selects the kernel; it is not part of the REST base.
    base = QUrl(base).adjusted(QUrl::RemoveQuery | QUrl::RemoveFragment).toString();
    while (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    return base;
}

QFuture<Outcome<SandboxHandle>> JupyterBackend::create(const SandboxParams &params) {
    const QString base = baseFor(params, nullptr);
    if (base.isEmpty())
        return ready(Outcome<SandboxHandle>::failure(kNoBase));
    const QString token = tokenFor(params);
    QNetworkRequest request(jupyterrest::apiUrl(base, QStringLiteral("/api/kernels")));
    jupyterrest::authorise(request, token);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setTransferTimeout(m_options.channel.requestTimeoutMs);
    const QString kernel = kernelFor(params);
    QJsonObject body; // no name: the server's default kernel (Enterprise Gateway's too)
    if (!kernel.isEmpty())
        body.insert(QStringLiteral("name"), kernel);
    QNetworkReply *reply = m_nam->post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));
    auto promise = std::make_shared<QPromise<Outcome<SandboxHandle>>>();
    promise->start();
    connect(reply, &QNetworkReply::finished, this, [this, reply, promise, base, token, kernel] {
        reply->deleteLater();
        const int status = jupyterrest::httpStatus(reply);
        const QByteArray bytes = reply->readAll();
        Outcome<SandboxHandle> outcome;
        const QString id =
            QJsonDocument::fromJson(bytes).object().value(QLatin1String("id")).toString();
        if (jupyterrest::isUnauthorised(status)) {
            outcome = Outcome<SandboxHandle>::failure(
                jupyterrest::unauthorisedMessage(base, token, reply, bytes));
        } else if (status == 0) {
            outcome = Outcome<SandboxHandle>::failure(jupyterrest::unreachableMessage(base, reply));
        } else if (status < 200 || status >= 300 || id.isEmpty()) {
            outcome = Outcome<SandboxHandle>::failure(
                QStringLiteral("starting a '%1' kernel on Jupyter server %2 failed: %3")
                    .arg(kernel.isEmpty() ? QStringLiteral("default") : kernel, base,
                         jupyterrest::describeFailure(reply, bytes)));
        } else {
            SandboxHandle handle;
            handle.id = id;
            handle.provider = provider();
            handle.details.insert(QStringLiteral("apiBase"), base);
            handle.details.insert(
                QStringLiteral("kernelName"),
                QJsonDocument::fromJson(bytes).object().value(QLatin1String("name")).toString());
            outcome = Outcome<SandboxHandle>::success(handle);
        }
        promise->addResult(outcome);
        promise->finish();
    });
    return promise->future();
}

JupyterKernelChannel *JupyterBackend::channelFor(const SandboxHandle &sandbox, const QString &base,
                                                 const QString &token) {
    JupyterKernelChannel *channel = m_channels.value(sandbox.id);
    if (channel) {
        channel->setToken(token);
        return channel;
    }
    channel = new JupyterKernelChannel(m_nam, base, token, sandbox.id, m_options.channel, this);
    connect(channel, &JupyterKernelChannel::outputReceived, this, &JupyterBackend::outputReceived);
    connect(channel, &JupyterKernelChannel::kernelRestarted, this,
            &JupyterBackend::kernelRestarted);
    m_channels.insert(sandbox.id, channel);
    return channel;
}

QFuture<Outcome<ExecutionResult>>
JupyterBackend::run(const SandboxHandle &sandbox, const QString &code, const SandboxParams &params,
                    const SandboxOutputSink &onOutput, const CancellationToken &cancel) {
    const QString base = baseFor(params, &sandbox);
    if (base.isEmpty())
        return ready(Outcome<ExecutionResult>::failure(kNoBase));
    if (!sandbox.isValid())
        return ready(Outcome<ExecutionResult>::failure(
            QStringLiteral("cannot run code: no Jupyter kernel id")));
    return channelFor(sandbox, base, tokenFor(params))->execute(code, onOutput, cancel);
}

QFuture<Outcome<bool>> JupyterBackend::remove(const SandboxHandle &sandbox,
                                              const SandboxParams &params) {
    const QString base = baseFor(params, &sandbox);
    if (base.isEmpty())
        return ready(Outcome<bool>::failure(kNoBase));
    if (JupyterKernelChannel *channel = m_channels.take(sandbox.id)) {
        channel->shutdown(QStringLiteral("Jupyter kernel %1 was deleted").arg(sandbox.id));
        channel->deleteLater();
    }
    const QString token = tokenFor(params);
    QNetworkRequest request(
        jupyterrest::apiUrl(base, QStringLiteral("/api/kernels/") + sandbox.id));
    jupyterrest::authorise(request, token);
    request.setTransferTimeout(m_options.channel.requestTimeoutMs);
    QNetworkReply *reply = m_nam->deleteResource(request);
    auto promise = std::make_shared<QPromise<Outcome<bool>>>();
    promise->start();
    const QString id = sandbox.id;
    connect(reply, &QNetworkReply::finished, this, [reply, promise, base, token, id] {
        reply->deleteLater();
        const int status = jupyterrest::httpStatus(reply);
        const QByteArray bytes = reply->readAll();
        Outcome<bool> outcome;
        if (status == 404)
            outcome = Outcome<bool>::success(false);
        else if (jupyterrest::isUnauthorised(status))
            outcome =
                Outcome<bool>::failure(jupyterrest::unauthorisedMessage(base, token, reply, bytes));
        else if (status == 0)
            outcome = Outcome<bool>::failure(jupyterrest::unreachableMessage(base, reply));
        else if (status < 200 || status >= 300)
            outcome =
                Outcome<bool>::failure(QStringLiteral("deleting Jupyter kernel %1 failed: %2")
                                           .arg(id, jupyterrest::describeFailure(reply, bytes)));
        else
            outcome = Outcome<bool>::success(true);
        promise->addResult(outcome);
        promise->finish();
    });
    return promise->future();
}

QFuture<SandboxSelfTest> JupyterBackend::probe(const SandboxParams &params) {
    const QString base = baseFor(params, nullptr);
    if (base.isEmpty()) {
        SandboxSelfTest test;
        test.problems << kNoBase;
        m_lastProbe = test;
        return ready(test);
    }
    const QString token = tokenFor(params);
    const QString kernel = kernelFor(params);
    auto promise = std::make_shared<QPromise<SandboxSelfTest>>();
    promise->start();
    auto finish = [this, promise](const SandboxSelfTest &test) {
        m_lastProbe = test;
        promise->addResult(test);
        promise->finish();
    };
    // Step 1: reachable? (/api answers without a token.)
    QNetworkRequest request(jupyterrest::apiUrl(base, QStringLiteral("/api")));
    request.setTransferTimeout(m_options.channel.requestTimeoutMs);
    QNetworkReply *reply = m_nam->get(request);
    connect(reply, &QNetworkReply::finished, this, [this, reply, base, token, finish, kernel] {
        reply->deleteLater();
        const int status = jupyterrest::httpStatus(reply);
        if (status == 0 || status >= 400) {
            SandboxSelfTest test;
            test.problems << (status == 0 ? jupyterrest::unreachableMessage(base, reply)
                                          : QStringLiteral("%1/api is not a Jupyter server API: %2")
                                                .arg(base, jupyterrest::describeFailure(
                                                               reply, reply->readAll())));
            finish(test);
            return;
        }
        // Step 2: authorised, and does it offer our kernel?
        QNetworkRequest specs(jupyterrest::apiUrl(base, QStringLiteral("/api/kernelspecs")));
        jupyterrest::authorise(specs, token);
        specs.setTransferTimeout(m_options.channel.requestTimeoutMs);
        QNetworkReply *second = m_nam->get(specs);
        connect(second, &QNetworkReply::finished, this, [second, base, token, finish, kernel] {
            second->deleteLater();
            const int code = jupyterrest::httpStatus(second);
            const QByteArray bytes = second->readAll();
            SandboxSelfTest test;
            if (jupyterrest::isUnauthorised(code)) {
                test.problems << jupyterrest::unauthorisedMessage(base, token, second, bytes);
            } else if (code < 200 || code >= 300) {
                test.problems << QStringLiteral("listing kernels on %1 failed: %2")
                                     .arg(base, jupyterrest::describeFailure(second, bytes));
            } else {
                const QJsonObject json = QJsonDocument::fromJson(bytes).object();
                const QJsonObject specsJson = json.value(QLatin1String("kernelspecs")).toObject();
                const QString wanted =
                    kernel.isEmpty() ? json.value(QLatin1String("default")).toString() : kernel;
                if (!specsJson.contains(wanted)) {
                    test.problems << QStringLiteral("Jupyter server %1 offers no '%2' kernel "
                                                    "(it has: %3)")
                                         .arg(base, wanted,
                                              specsJson.keys().join(QStringLiteral(", ")));
                } else {
                    test.available = true;
                }
            }
            finish(test);
        });
    });
    return promise->future();
}

bool JupyterBackend::dropConnection(const QString &kernelId) {
    JupyterKernelChannel *channel = m_channels.value(kernelId);
    if (!channel || !channel->isConnected())
        return false;
    channel->dropConnection();
    return true;
}

QFuture<Outcome<QList<SandboxFileInfo>>> JupyterBackend::listFiles(const SandboxHandle &sandbox,
                                                                   const SandboxParams &params) {
    return SandboxFileCode::list(this, sandbox, params);
}

QFuture<Outcome<QByteArray>> JupyterBackend::readFile(const SandboxHandle &sandbox,
                                                      const QString &path,
                                                      const SandboxParams &params) {
    return SandboxFileCode::read(this, sandbox, path, params);
}

QFuture<Outcome<SandboxFileInfo>> JupyterBackend::writeFile(const SandboxHandle &sandbox,
                                                            const QString &path,
                                                            const QByteArray &data,
                                                            const SandboxParams &params) {
    return SandboxFileCode::write(this, sandbox, path, data, params);
}

QFuture<Outcome<bool>> JupyterBackend::deleteFile(const SandboxHandle &sandbox, const QString &path,
                                                  const SandboxParams &params) {
    return SandboxFileCode::remove(this, sandbox, path, params);
}

} // namespace loopscope
