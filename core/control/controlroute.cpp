#include "control/controlroute.h"

#include <QUrlQuery>

namespace loopscope {

namespace {

const QString kPrefix = QStringLiteral("/loopscope/v1");

QString S(const char *text) {
    return QString::fromLatin1(text);
}

ControlRoute error(ControlRoute route, int status, const QString &message, const QString &code,
                   const QString &param = {}) {
    route.kind = ControlRoute::Kind::Error;
    route.status = status;
    route.message = message;
    route.code = code;
    route.param = param;
    return route;
}

ControlRoute methodNotAllowed(ControlRoute route) {
    return error(std::move(route), 405, S("Method not allowed on this control route."),
                 S("method_not_allowed"));
}

ControlRoute routed(ControlRoute route, ControlRoute::Kind kind, const QString &id = {}) {
    route.kind = kind;
    route.id = id;
    return route;
}

QString queryParam(const QUrlQuery &query, const QString &name) {
    return query.queryItemValue(name, QUrl::FullyDecoded);
}

// limit=N within 1..kMaxLimit (50 when absent); false when it is not.
bool parseLimit(const QUrlQuery &query, int *limit) {
    if (!query.hasQueryItem(S("limit"))) {
        *limit = 50;
        return true;
    }
    bool ok = false;
    *limit = query.queryItemValue(S("limit")).toInt(&ok);
    return ok && *limit >= 1 && *limit <= ControlRoute::kMaxLimit;
}

} // namespace

ControlRoute ControlRoute::parse(const QByteArray &method, const QString &path,
                                 const QByteArray &query) {
    ControlRoute route;
    route.parts = path.mid(kPrefix.size()).split(u'/', Qt::SkipEmptyParts);
    const QStringList parts = route.parts; // a copy: `route` is moved into its answers below
    const int n = int(parts.size());
    const QString head = n > 0 ? parts.first() : QString();
    const QUrlQuery q(QString::fromUtf8(query));
    const auto withLimit = [&q](ControlRoute r) {
        if (!parseLimit(q, &r.filter.limit))
            return error(std::move(r), 400, S("limit must be an integer from 1 to 1000"),
                         S("invalid_parameter"), S("limit"));
        return r;
    };

    if (n == 0)
        return method == "GET" ? routed(std::move(route), Kind::Stats)
                               : methodNotAllowed(std::move(route));
    if ((head == S("breakpoints") && n == 1) || (head == S("paused") && n <= 2))
        return routed(std::move(route), Kind::Breakpoints);
    if (head == S("flows")) {
        if (n == 1 && method == "GET") {
            route = withLimit(routed(std::move(route), Kind::ListFlows));
            if (route.kind == Kind::Error)
                return route;
            route.filter.before = queryParam(q, S("before"));
            route.filter.q = queryParam(q, S("q"));
            route.filter.runId = queryParam(q, S("run"));
            route.filter.state = queryParam(q, S("state"));
            static const QStringList states{S("running"), S("paused"), S("completed"), S("failed")};
            if (!route.filter.state.isEmpty() && !states.contains(route.filter.state))
                return error(std::move(route), 400,
                             S("state must be one of running, paused, completed, failed"),
                             S("invalid_parameter"), S("state"));
            return route;
        }
        if (n == 1 && method == "DELETE")
            return routed(std::move(route), Kind::ClearFlows);
        if (n == 2 && method == "GET")
            return routed(std::move(route), Kind::GetFlow, parts.at(1));
        if (n == 3 && parts.at(2) == S("replay") && method == "POST")
            return routed(std::move(route), Kind::ReplayFlow, parts.at(1));
        if (n <= 3)
            return methodNotAllowed(std::move(route));
        return error(std::move(route), 404,
                     S("No control route found with id '%1'.").arg(path.left(100)), S("not_found"));
    }
    if (head == S("events") && n == 1)
        return method == "GET" ? routed(std::move(route), Kind::Events)
                               : methodNotAllowed(std::move(route));
    if (head == S("runs") && n <= 2) {
        if (method != "GET")
            return methodNotAllowed(std::move(route));
        if (n == 1)
            return withLimit(routed(std::move(route), Kind::ListRuns));
        return routed(std::move(route), Kind::GetRun, parts.at(1));
    }
    if (head == S("sandboxes") && n <= 2) {
        if (n == 1 && method == "GET")
            return routed(std::move(route), Kind::ListSandboxes);
        if (n == 2 && method == "DELETE")
            return routed(std::move(route), Kind::DeleteSandbox, parts.at(1));
        return methodNotAllowed(std::move(route));
    }
    if (head == S("export.har") && n == 1) {
        if (method != "GET")
            return methodNotAllowed(std::move(route));
        route = routed(std::move(route), Kind::ExportHar);
        for (const QString &id : queryParam(q, S("ids")).split(u',', Qt::SkipEmptyParts))
            if (const QString trimmed = id.trimmed(); !trimmed.isEmpty())
                route.ids << trimmed;
        route.run = queryParam(q, S("run"));
        return route;
    }
    if (head == S("import") && n == 1)
        return method == "POST" ? routed(std::move(route), Kind::ImportHar)
                                : methodNotAllowed(std::move(route));
    return error(std::move(route), 404, S("Unknown control route %1").arg(path.left(100)),
                 S("unknown_url"));
}

} // namespace loopscope
