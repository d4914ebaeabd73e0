#include "control/breakpointsapi.h"

#include "http/responsesink.h"
#include "loop/pausebroker.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace loopscope {

namespace {

const QString kInvalid = QStringLiteral("invalid_request_error");

bool jsonBody(const HttpRequest &request, ResponseSink *sink, QJsonObject *out) {
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject()) {
        sink->sendError(400, QStringLiteral("The body must be a JSON object."), kInvalid,
                        QStringLiteral("invalid_json"));
        return false;
    }
    *out = doc.object();
    return true;
}

void methodNotAllowed(ResponseSink *sink) {
    sink->sendError(405, QStringLiteral("Method not allowed on this control route."), kInvalid,
                    QStringLiteral("method_not_allowed"));
}

} // namespace

BreakpointsApi::BreakpointsApi(QObject *parent)
    : QObject(parent) {}

void BreakpointsApi::setBroker(PauseBroker *broker) {
    m_broker = broker;
}

PauseBroker *BreakpointsApi::broker() const {
    return m_broker;
}

void BreakpointsApi::handle(const HttpRequest &request, const QStringList &parts,
                            ResponseSink *sink) {
    if (!m_broker) {
        sink->sendError(503, QStringLiteral("Breakpoints are not available (no interception)."),
                        QStringLiteral("server_error"), QStringLiteral("breakpoints_unavailable"));
        return;
    }
    const QByteArray &method = request.method;
    if (parts.first() == QLatin1String("breakpoints")) {
        if (method == "GET") {
            sink->sendJson(200, m_broker->settings().toJson());
        } else if (method == "PUT") {
            QJsonObject body;
            if (!jsonBody(request, sink, &body))
                return;
            QString error;
            const auto settings = BreakpointSettings::fromJson(body, &error);
            if (!settings) {
                sink->sendError(400, error, kInvalid, QStringLiteral("invalid_parameter"));
                return;
            }
            m_broker->setSettings(*settings);
            sink->sendJson(200, m_broker->settings().toJson());
        } else {
            methodNotAllowed(sink);
        }
        return;
    }
    if (parts.size() == 1) { // /paused
        if (method == "GET")
            sink->sendJson(200, {{QStringLiteral("object"), QStringLiteral("list")},
                                 {QStringLiteral("data"), m_broker->pending()}});
        else
            methodNotAllowed(sink);
        return;
    }
    if (method != "POST") {
        methodNotAllowed(sink);
        return;
    }
    QJsonObject body;
    if (!jsonBody(request, sink, &body))
        return;
    const QString id = parts.at(1);
    const PauseBroker::ResolveResult result = m_broker->resolve(id, body);
    switch (result.status) {
    case PauseBroker::ResolveStatus::Resolved:
        sink->sendJson(200, result.pause);
        return;
    case PauseBroker::ResolveStatus::NotFound:
        sink->sendError(404, QStringLiteral("No pause found with id '%1'.").arg(id.left(100)),
                        kInvalid, QStringLiteral("not_found"));
        return;
    case PauseBroker::ResolveStatus::AlreadyResolved:
        sink->sendError(409, QStringLiteral("Pause '%1' was already resolved.").arg(id.left(100)),
                        kInvalid, QStringLiteral("already_resolved"));
        return;
    case PauseBroker::ResolveStatus::Invalid:
        sink->sendError(400, result.error, kInvalid, QStringLiteral("invalid_parameter"));
        return;
    }
}

} // namespace loopscope
