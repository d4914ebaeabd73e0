#include "sandbox/remote/e2bbackend.h"

#include "inspect/credentialpolicy.h"
#include "sandbox/sandboxfilecode.h"

#include "sandbox/remote/ndjsonlinereader.h"
#include "sandbox/sandboxoutputcoalescer.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFuture>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QPromise>
#include <QTimer>

namespace loopscope {

namespace {

constexpr qsizetype kErrorBodyLimit = 64 * 1024;

int httpStatus(const QNetworkReply *reply) {
    return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

// A short, readable excerpt of an error body: e2b answers {"code":..,"message":".."}.
QString bodyExcerpt(const QByteArray &body) {
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    if (doc.isObject()) {
        const QString message = doc.object().value(QLatin1String("message")).toString();
        if (!message.isEmpty())
            return message;
    }
    QString text = QString::fromUtf8(body.left(300)).simplified();
    return text.isEmpty() ? QStringLiteral("(empty body)") : text;
}

QString httpFailure(const QNetworkReply *reply, const QByteArray &body) {
    const int status = httpStatus(reply);
    if (status == 0)
        return reply->errorString();
    const QString reason = reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString();
    return QStringLiteral("HTTP %1%2: %3")
        .arg(status)
        .arg(reason.isEmpty() ? QString() : QLatin1Char(' ') + reason)
        .arg(bodyExcerpt(body));
}

template<typename T> QFuture<T> ready(T value) {
    return QtFuture::makeReadyFuture(std::move(value));
}

} // namespace

struct E2bBackend::RunState {
    SandboxHandle original; // as the caller knows it
    SandboxHandle live;     // where the code runs now
    QString code;
    SandboxParams params;
    QPromise<Outcome<ExecutionResult>> promise;
    QElapsedTimer elapsed;
    QString notice; // prepended to stderr when the sandbox had to be recreated
    bool recreated = false;
    std::shared_ptr<SandboxOutputCoalescer> liveOutput; // null without a sink
};

E2bBackend::E2bBackend(QObject *parent)
    : E2bBackend(Options{}, parent) {}

E2bBackend::E2bBackend(const Options &options, QObject *parent)
    : SandboxBackend(parent)
    , m_options(options)
    , m_nam(new QNetworkAccessManager(this))
    , m_now([] { return QDateTime::currentMSecsSinceEpoch(); }) {
    m_lastProbe.available = true;
    m_lastProbe.warnings << QStringLiteral("e2b: not checked yet (probe pending)");
}

E2bBackend::~E2bBackend() {
    // Settle every in-flight future with an error instead of leaving it cancelled: aborting a
    // reply runs its finished handler now, and m_shuttingDown stops follow-up requests.
    m_shuttingDown = true;
    const auto replies = m_nam->findChildren<QNetworkReply *>();
    for (QNetworkReply *reply : replies)
        reply->abort();
}

void E2bBackend::setClock(std::function<qint64()> nowMs) {
    m_now = std::move(nowMs);
}

SandboxSelfTest E2bBackend::selfTest() const {
    return m_lastProbe;
}

SandboxHandle E2bBackend::currentHandle(const SandboxHandle &sandbox) const {
    return m_replacements.value(sandbox.id, sandbox);
}

QString E2bBackend::apiKeyFor(const SandboxParams &params) const {
    if (!params.apiKey.isEmpty())
        return params.apiKey;
    return qEnvironmentVariable("E2B_API_KEY");
}

QUrl E2bBackend::apiUrl(const SandboxParams &params, const SandboxHandle *handle,
                        const QString &path) const {
    QString base = params.apiBase;
    if (base.isEmpty() && handle)
        base = handle->details.value(QStringLiteral("apiBase")).toString();
    if (base.isEmpty())
        base = QString::fromLatin1(kDefaultApiBase);
    while (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    return QUrl(base + path);
}

QFuture<Outcome<SandboxHandle>> E2bBackend::create(const SandboxParams &params) {
    const QString key = apiKeyFor(params);
    if (key.isEmpty())
        return ready(Outcome<SandboxHandle>::failure(
            QStringLiteral("E2B API key not set. Set E2B_API_KEY or pass api_key=...")));
    auto promise = std::make_shared<QPromise<Outcome<SandboxHandle>>>();
    promise->start();
    createWith(key, params.apiBase, [promise](Outcome<SandboxHandle> created) {
        promise->addResult(std::move(created));
        promise->finish();
    });
    return promise->future();
}

void E2bBackend::createWith(const QString &apiKey, const QString &apiBase,
                            std::function<void(Outcome<SandboxHandle>)> done) {
    SandboxParams params;
    params.apiBase = apiBase;
    const QUrl url = apiUrl(params, nullptr, QStringLiteral("/sandboxes"));
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setRawHeader("X-API-Key", apiKey.toUtf8());
    request.setTransferTimeout(m_options.requestTimeoutMs);
    QJsonObject body{{QStringLiteral("templateID"), m_options.templateId},
                     {QStringLiteral("timeout"), m_options.lifetimeSec},
                     {QStringLiteral("secure"), true},
                     {QStringLiteral("allow_internet_access"), m_options.allowInternetAccess}};
    QNetworkReply *reply = m_nam->post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));

    connect(reply, &QNetworkReply::finished, this, [this, reply, done, apiKey, apiBase, url] {
        reply->deleteLater();
        const QByteArray bytes = reply->readAll();
        const int status = httpStatus(reply);
        auto fail = [&](const QString &message) { done(Outcome<SandboxHandle>::failure(message)); };
        if (status == 401 || status == 403) {
            fail(QStringLiteral("e2b rejected the API key %1 (unauthorised, %2)")
                     .arg(CredentialPolicy::mask(apiKey), httpFailure(reply, bytes)));
            return;
        }
        if (reply->error() != QNetworkReply::NoError || status < 200 || status >= 300) {
            fail(QStringLiteral("e2b sandbox creation at %1 failed: %2")
                     .arg(url.toString(), httpFailure(reply, bytes)));
            return;
        }
        const QJsonObject json = QJsonDocument::fromJson(bytes).object();
        const QString id = json.value(QLatin1String("sandboxID")).toString();
        if (id.isEmpty()) {
            fail(QStringLiteral("e2b sandbox creation at %1 answered without a sandboxID: %2")
                     .arg(url.toString(), bodyExcerpt(bytes)));
            return;
        }
        SandboxHandle handle;
        handle.id = id;
        handle.provider = provider();
        QString domain = json.value(QLatin1String("domain")).toString();
        if (domain.isEmpty())
            domain = QString::fromLatin1(kDefaultDomain);
        handle.details.insert(QStringLiteral("domain"), domain);
        handle.details.insert(QStringLiteral("envdAccessToken"),
                              json.value(QLatin1String("envdAccessToken")).toString());
        const QString traffic = json.value(QLatin1String("trafficAccessToken")).toString();
        if (!traffic.isEmpty())
            handle.details.insert(QStringLiteral("trafficAccessToken"), traffic);
        if (!apiBase.isEmpty())
            handle.details.insert(QStringLiteral("apiBase"), apiBase);
        m_expiresAtMs.insert(id, m_now() + qint64(m_options.lifetimeSec) * 1000);
        done(Outcome<SandboxHandle>::success(handle));
    });
}

QFuture<Outcome<ExecutionResult>> E2bBackend::run(const SandboxHandle &sandbox, const QString &code,
                                                  const SandboxParams &params,
                                                  const SandboxOutputSink &onOutput,
                                                  const CancellationToken &) {
    const SandboxHandle live = currentHandle(sandbox);
    if (live.details.value(QStringLiteral("envdAccessToken")).toString().isEmpty())
        return ready(Outcome<ExecutionResult>::failure(
            QStringLiteral("Cannot run code from a sandbox id alone: e2b sandbox %1 has no "
                           "envd access token (it was not created by this backend)")
                .arg(sandbox.id)));
    auto state = std::make_shared<RunState>();
    state->original = sandbox;
    state->live = live;
    state->code = code;
    state->params = params;
    if (onOutput) {
        SandboxOutputCoalescer::Limits limits;
        limits.capBytes = m_options.liveOutputCapBytes;
        state->liveOutput = std::make_shared<SandboxOutputCoalescer>(onOutput, limits);
    }
    state->promise.start();
    state->elapsed.start();
    auto future = state->promise.future();
    renewThenExecute(state);
    return future;
}

void E2bBackend::renewThenExecute(std::shared_ptr<RunState> state) {
    const qint64 lifetimeMs = qint64(m_options.lifetimeSec) * 1000;
    const auto expiry = m_expiresAtMs.constFind(state->live.id);
    const QString key = apiKeyFor(state->params);
    if (!m_options.renewLifetime || key.isEmpty() || expiry == m_expiresAtMs.constEnd() ||
        *expiry - m_now() >= lifetimeMs / 2) {
        startExecute(state);
        return;
    }
    // Less than half the lifetime left: push the end of life out before running.
    QNetworkRequest request(apiUrl(state->params, &state->live,
                                   QStringLiteral("/sandboxes/%1/timeout").arg(state->live.id)));
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setRawHeader("X-API-Key", key.toUtf8());
    request.setTransferTimeout(m_options.requestTimeoutMs);
    const QJsonObject body{{QStringLiteral("timeout"), m_options.lifetimeSec}};
    QNetworkReply *reply = m_nam->post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));
    const qint64 renewedAt = m_now();
    connect(reply, &QNetworkReply::finished, this, [this, reply, state, renewedAt, lifetimeMs] {
        reply->deleteLater();
        const int status = httpStatus(reply);
        if (status == 404) {
            handleGone(state, QStringLiteral("lifetime renewal answered HTTP 404"), true);
            return;
        }
        if (status >= 200 && status < 300)
            m_expiresAtMs.insert(state->live.id, renewedAt + lifetimeMs);
        // Any other renewal failure is not fatal: the run itself will tell.
        startExecute(state);
    });
}

void E2bBackend::startExecute(std::shared_ptr<RunState> state) {
    if (m_shuttingDown) {
        state->promise.addResult(
            Outcome<ExecutionResult>::failure(QStringLiteral("the e2b backend was shut down")));
        state->promise.finish();
        return;
    }
    const SandboxHandle &live = state->live;
    QString urlText = m_options.executeUrlTemplate;
    urlText.replace(QLatin1String("{id}"), live.id);
    urlText.replace(
        QLatin1String("{domain}"),
        live.details.value(QStringLiteral("domain"), QString::fromLatin1(kDefaultDomain))
            .toString());
    QNetworkRequest request{QUrl(urlText)};
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setRawHeader("X-Access-Token",
                         live.details.value(QStringLiteral("envdAccessToken")).toString().toUtf8());
    const QString traffic = live.details.value(QStringLiteral("trafficAccessToken")).toString();
    if (!traffic.isEmpty())
        request.setRawHeader("E2B-Traffic-Access-Token", traffic.toUtf8());
    const QJsonObject body{{QStringLiteral("code"), state->code},
                           {QStringLiteral("context_id"), QJsonValue::Null},
                           {QStringLiteral("env_vars"), QJsonValue::Null}};
    QNetworkReply *reply = m_nam->post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));

    struct Stream {
        explicit Stream(qint64 cap)
            : reader(cap) {}
        NdjsonLineReader reader;
        ExecutionResult result;
        bool haveError = false;
        bool haveCount = false;
        QByteArray errorBody;
        bool done = false;
    };
    auto stream = std::make_shared<Stream>(m_options.outputCapBytes);
    QPointer<QNetworkReply> guard(reply);

    auto finishWith = [state, stream, reply](Outcome<ExecutionResult> outcome) {
        if (stream->done)
            return;
        stream->done = true;
        if (outcome.ok()) {
            outcome.value.durationMs = double(state->elapsed.nsecsElapsed()) / 1e6;
            if (!state->notice.isEmpty())
                outcome.value.stderrText.prepend(state->notice);
        }
        if (state->liveOutput)
            state->liveOutput->finish(); // every chunk before the result
        state->promise.addResult(std::move(outcome));
        state->promise.finish();
        if (reply->isRunning())
            reply->abort();
    };

    // Applies LiteLLM's parse rules to one line; a non-empty return aborts the run.
    const QString sandboxId = live.id;
    auto handleLine = [this, stream, sandboxId, state](const QByteArray &raw) -> QString {
        const QByteArray line = raw.trimmed();
        if (line.isEmpty())
            return {};
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &parseError);
        if (parseError.error != QJsonParseError::NoError) {
            // QJsonDocument refuses top-level scalars; `null` is skipped, other scalars abort.
            const QJsonDocument wrapped = QJsonDocument::fromJson("[" + line + "]");
            if (!wrapped.isArray())
                return {}; // not JSON at all: skipped
            if (wrapped.array().at(0).isNull())
                return {};
            return QStringLiteral("e2b sent an execution message that is not an object: %1")
                .arg(QString::fromUtf8(line.left(200)));
        }
        if (!doc.isObject())
            return QStringLiteral("e2b sent an execution message that is not an object: %1")
                .arg(QString::fromUtf8(line.left(200)));
        QJsonObject message = doc.object();
        const QString type = message.value(QLatin1String("type")).toString();
        ExecutionResult &result = stream->result;
        if (type == QLatin1String("stdout") || type == QLatin1String("stderr")) {
            const QJsonValue text = message.value(QLatin1String("text"));
            if (!text.isString())
                return QStringLiteral("e2b sent a %1 message whose text is not a string").arg(type);
            (type == QLatin1String("stdout") ? result.stdoutText : result.stderrText)
                .append(text.toString());
            emit outputReceived(sandboxId, type, text.toString());
            if (state->liveOutput)
                state->liveOutput->add(type, text.toString());
        } else if (type == QLatin1String("result")) {
            // Figures come as a base64 "png" field of a result.
            const QJsonValue png = message.value(QLatin1String("png"));
            if (png.isString())
                appendSandboxImage(result, QByteArray::fromBase64(png.toString().toLatin1()));
            if (m_options.includeResultsInStdout) {
                const QString text = message.value(QLatin1String("text")).toString();
                if (!text.isEmpty())
                    result.stdoutText.append(text + QLatin1Char('\n'));
            }
        } else if (type == QLatin1String("error")) {
            if (!stream->haveError) {
                stream->haveError = true;
                auto asText = [](const QJsonValue &v) {
                    return v.isString()
                               ? v.toString()
                               : (v.isNull() || v.isUndefined()
                                      ? QString()
                                      : QString::fromUtf8(QJsonDocument(QJsonArray{v})
                                                              .toJson(QJsonDocument::Compact))
                                            .mid(1)
                                            .chopped(1));
                };
                result.error = ExecutionError{asText(message.value(QLatin1String("name"))),
                                              asText(message.value(QLatin1String("value"))),
                                              asText(message.value(QLatin1String("traceback")))};
            }
        } else if (type == QLatin1String("number_of_executions")) {
            if (!stream->haveCount) {
                stream->haveCount = true;
                result.executionCount = message.value(QLatin1String("execution_count")).toInt();
            }
        }
        return {};
    };

    auto consume = [stream, finishWith, handleLine](const QList<QByteArray> &lines) -> bool {
        if (stream->reader.capExceeded()) {
            finishWith(Outcome<ExecutionResult>::failure(stream->reader.capExceededMessage()));
            return false;
        }
        for (const QByteArray &line : lines) {
            const QString problem = handleLine(line);
            if (!problem.isEmpty()) {
                finishWith(Outcome<ExecutionResult>::failure(problem));
                return false;
            }
        }
        return true;
    };

    connect(reply, &QNetworkReply::readyRead, this, [reply, stream, consume] {
        if (stream->done)
            return;
        const int status = httpStatus(reply);
        if (status != 0 && (status < 200 || status >= 300)) {
            const QByteArray bytes = reply->readAll();
            if (stream->errorBody.size() < kErrorBodyLimit)
                stream->errorBody.append(bytes.left(kErrorBodyLimit - stream->errorBody.size()));
            return;
        }
        consume(stream->reader.feed(reply->readAll()));
    });

    if (m_options.runTimeoutMs > 0) {
        auto *timer = new QTimer(reply);
        timer->setSingleShot(true);
        const int timeoutMs = m_options.runTimeoutMs;
        connect(timer, &QTimer::timeout, this, [stream, finishWith, timeoutMs] {
            ExecutionResult result = stream->result;
            result.timedOut = true;
            result.error = ExecutionError{
                QStringLiteral("TimeoutError"),
                QStringLiteral("code execution timed out after %1 seconds (the e2b request was "
                               "abandoned; the code may still be running in the sandbox)")
                    .arg(timeoutMs / 1000.0),
                QString()};
            finishWith(Outcome<ExecutionResult>::success(result));
        });
        timer->start(timeoutMs);
    }

    connect(
        reply, &QNetworkReply::finished, this, [this, reply, state, stream, consume, finishWith] {
            reply->deleteLater();
            if (stream->done)
                return;
            const int status = httpStatus(reply);
            if (status == 404 || status == 502) {
                stream->done = true; // handleGone settles the promise
                handleGone(state, httpFailure(reply, stream->errorBody + reply->readAll()), false);
                return;
            }
            const QString where = QStringLiteral("e2b sandbox %1").arg(state->live.id);
            if (status == 401 || status == 403) {
                finishWith(Outcome<ExecutionResult>::failure(
                    QStringLiteral("%1 rejected its access token (unauthorised, %2)")
                        .arg(where, httpFailure(reply, stream->errorBody))));
                return;
            }
            if (reply->error() != QNetworkReply::NoError || status < 200 || status >= 300) {
                finishWith(Outcome<ExecutionResult>::failure(
                    QStringLiteral("%1: code execution request failed: %2")
                        .arg(where, httpFailure(reply, stream->errorBody))));
                return;
            }
            if (!consume(stream->reader.feed(reply->readAll())) ||
                !consume(stream->reader.finish()))
                return;
            finishWith(Outcome<ExecutionResult>::success(stream->result));
        });
}

void E2bBackend::handleGone(std::shared_ptr<RunState> state, const QString &why, bool confirmed) {
    const QString liveId = state->live.id;
    auto fail = [state, liveId](const QString &message) {
        state->promise.addResult(Outcome<ExecutionResult>::failure(message));
        state->promise.finish();
    };
    const QString key = apiKeyFor(state->params);
    if (!m_options.recreateExpired || state->recreated || key.isEmpty() || m_shuttingDown) {
        fail(QStringLiteral("e2b sandbox %1 is gone (its lifetime may have run out): %2")
                 .arg(liveId, why));
        return;
    }
    auto recreate = [this, state, key, fail, liveId, why] {
        m_expiresAtMs.remove(liveId);
        const QString apiBase =
            state->params.apiBase.isEmpty()
                ? state->live.details.value(QStringLiteral("apiBase")).toString()
                : state->params.apiBase;
        // A plain callback, not QFuture::then(this): Qt 6.4 asserts when the context dies first.
        createWith(key, apiBase, [this, state, fail, liveId, why](Outcome<SandboxHandle> created) {
            if (!created.ok()) {
                fail(QStringLiteral("e2b sandbox %1 is gone (%2) and recreating it failed: %3")
                         .arg(liveId, why, created.error));
                return;
            }
            state->recreated = true;
            state->live = created.value;
            state->notice = QStringLiteral("[loopscope] e2b sandbox %1 had expired; it was "
                                           "recreated as %2 and its earlier state (variables, "
                                           "files) was lost.\n")
                                .arg(liveId, created.value.id);
            m_replacements.insert(state->original.id, created.value);
            emit sandboxRecreated(state->original.id, created.value);
            startExecute(state);
        });
    };
    if (confirmed) {
        recreate();
        return;
    }
    // A 404/502 from the sandbox host may be transient: ask the API whether the sandbox exists.
    QNetworkRequest request(
        apiUrl(state->params, &state->live, QStringLiteral("/sandboxes/%1").arg(liveId)));
    request.setRawHeader("X-API-Key", key.toUtf8());
    request.setTransferTimeout(m_options.requestTimeoutMs);
    QNetworkReply *reply = m_nam->get(request);
    connect(reply, &QNetworkReply::finished, this, [this, reply, recreate, fail, liveId, why] {
        reply->deleteLater();
        if (httpStatus(reply) == 404 && !m_shuttingDown) {
            recreate();
            return;
        }
        fail(QStringLiteral("e2b sandbox %1: code execution request failed: %2").arg(liveId, why));
    });
}

QFuture<Outcome<bool>> E2bBackend::remove(const SandboxHandle &sandbox,
                                          const SandboxParams &params) {
    const SandboxHandle live = currentHandle(sandbox);
    const QString key = apiKeyFor(params);
    if (key.isEmpty())
        return ready(Outcome<bool>::failure(
            QStringLiteral("E2B API key not set. Set E2B_API_KEY or pass api_key=...")));
    const QUrl url = apiUrl(params, &live, QStringLiteral("/sandboxes/%1").arg(live.id));
    QNetworkRequest request(url);
    request.setRawHeader("X-API-Key", key.toUtf8());
    request.setTransferTimeout(m_options.requestTimeoutMs);
    QNetworkReply *reply = m_nam->deleteResource(request);
    auto promise = std::make_shared<QPromise<Outcome<bool>>>();
    promise->start();
    const QString originalId = sandbox.id;
    connect(reply, &QNetworkReply::finished, this, [this, reply, promise, key, live, originalId] {
        reply->deleteLater();
        const int status = httpStatus(reply);
        const QByteArray bytes = reply->readAll();
        Outcome<bool> outcome;
        if (status == 404) {
            outcome = Outcome<bool>::success(false);
        } else if (status == 401 || status == 403) {
            outcome = Outcome<bool>::failure(
                QStringLiteral("e2b rejected the API key %1 (unauthorised, %2)")
                    .arg(CredentialPolicy::mask(key), httpFailure(reply, bytes)));
        } else if (reply->error() != QNetworkReply::NoError || status < 200 || status >= 300) {
            outcome = Outcome<bool>::failure(QStringLiteral("deleting e2b sandbox %1 failed: %2")
                                                 .arg(live.id, httpFailure(reply, bytes)));
        } else {
            outcome = Outcome<bool>::success(true);
        }
        if (outcome.ok()) {
            m_replacements.remove(originalId);
            m_expiresAtMs.remove(live.id);
        }
        promise->addResult(outcome);
        promise->finish();
    });
    return promise->future();
}

QFuture<SandboxSelfTest> E2bBackend::probe(const SandboxParams &params) {
    const QString key = apiKeyFor(params);
    if (key.isEmpty()) {
        SandboxSelfTest test;
        test.problems << QStringLiteral("e2b: API key not set (set E2B_API_KEY or api_key in the "
                                        "sandbox_tools entry)");
        m_lastProbe = test;
        return ready(test);
    }
    const QUrl url = apiUrl(params, nullptr, QStringLiteral("/sandboxes"));
    QNetworkRequest request(url);
    request.setRawHeader("X-API-Key", key.toUtf8());
    request.setTransferTimeout(m_options.requestTimeoutMs);
    QNetworkReply *reply = m_nam->get(request);
    auto promise = std::make_shared<QPromise<SandboxSelfTest>>();
    promise->start();
    connect(reply, &QNetworkReply::finished, this, [this, reply, promise, key, url] {
        reply->deleteLater();
        const int status = httpStatus(reply);
        const QByteArray bytes = reply->readAll();
        SandboxSelfTest test;
        if (status == 401 || status == 403) {
            test.problems << QStringLiteral("e2b at %1 is reachable but rejected the API key %2 "
                                            "(unauthorised, %3)")
                                 .arg(url.adjusted(QUrl::RemovePath).toString(),
                                      CredentialPolicy::mask(key), httpFailure(reply, bytes));
        } else if (status == 0) {
            test.problems << QStringLiteral("e2b API at %1 is unreachable: %2")
                                 .arg(url.adjusted(QUrl::RemovePath).toString(),
                                      reply->errorString());
        } else if (status < 200 || status >= 300) {
            test.problems << QStringLiteral("e2b API at %1 answered %2")
                                 .arg(url.toString(), httpFailure(reply, bytes));
        } else {
            test.available = true;
        }
        m_lastProbe = test;
        promise->addResult(test);
        promise->finish();
    });
    return promise->future();
}

QFuture<Outcome<QList<SandboxFileInfo>>> E2bBackend::listFiles(const SandboxHandle &sandbox,
                                                               const SandboxParams &params) {
    return SandboxFileCode::list(this, sandbox, params);
}

QFuture<Outcome<QByteArray>> E2bBackend::readFile(const SandboxHandle &sandbox, const QString &path,
                                                  const SandboxParams &params) {
    return SandboxFileCode::read(this, sandbox, path, params);
}

QFuture<Outcome<SandboxFileInfo>> E2bBackend::writeFile(const SandboxHandle &sandbox,
                                                        const QString &path, const QByteArray &data,
                                                        const SandboxParams &params) {
    return SandboxFileCode::write(this, sandbox, path, data, params);
}

QFuture<Outcome<bool>> E2bBackend::deleteFile(const SandboxHandle &sandbox, const QString &path,
                                              const SandboxParams &params) {
    return SandboxFileCode::remove(this, sandbox, path, params);
}

} // namespace loopscope
