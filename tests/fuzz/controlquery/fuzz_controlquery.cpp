// ControlRoute::parse (every /loopscope/v1 request's path and query): the input is
// "METHOD path?query" — the path as the HTTP front hands it over (decoded), the query raw.
// Invariants: an error is a 400/404/405 with a message and a code; a route's limit is within
// 1..1000; a state filter is one of the four states; ids of a route are non-empty path segments;
// export ids are trimmed and non-empty; and parsing is a pure function (same input, same result).
#include "control/controlroute.h"
#include "fuzzsupport.h"

using loopscope::ControlRoute;
using loopscope::fuzz::FuzzInput;

namespace {

bool same(const ControlRoute &a, const ControlRoute &b) {
    return a.kind == b.kind && a.parts == b.parts && a.id == b.id && a.ids == b.ids &&
           a.run == b.run && a.status == b.status && a.message == b.message &&
           a.filter.limit == b.filter.limit && a.filter.before == b.filter.before &&
           a.filter.q == b.filter.q && a.filter.runId == b.filter.runId &&
           a.filter.state == b.filter.state;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const QByteArray all = FuzzInput(data, size).all();
    const qsizetype space = all.indexOf(' ');
    const QByteArray method = space < 0 ? QByteArray("GET") : all.left(space);
    const QByteArray target = space < 0 ? all : all.mid(space + 1);
    const qsizetype mark = target.indexOf('?');
    const QString path =
        QStringLiteral("/loopscope/v1") + QString::fromUtf8(mark < 0 ? target : target.left(mark));
    const QByteArray query = mark < 0 ? QByteArray() : target.mid(mark + 1);

    const ControlRoute route = ControlRoute::parse(method, path, query);
    FUZZ_CHECK(same(route, ControlRoute::parse(method, path, query)));
    using Kind = ControlRoute::Kind;
    if (route.kind == Kind::Error) {
        FUZZ_CHECK(route.status == 400 || route.status == 404 || route.status == 405);
        FUZZ_CHECK(!route.message.isEmpty() && !route.code.isEmpty());
        FUZZ_CHECK(route.message.size() < 200); // the path is cut, never echoed whole
        return 0;
    }
    FUZZ_CHECK(route.status == 0);
    FUZZ_CHECK(route.filter.limit >= 1 && route.filter.limit <= ControlRoute::kMaxLimit);
    static const QStringList states{QString(), QStringLiteral("running"), QStringLiteral("paused"),
                                    QStringLiteral("completed"), QStringLiteral("failed")};
    FUZZ_CHECK(states.contains(route.filter.state));
    for (const QString &part : route.parts)
        FUZZ_CHECK(!part.isEmpty() && !part.contains(u'/'));
    switch (route.kind) {
    case Kind::GetFlow:
    case Kind::ReplayFlow:
    case Kind::GetRun:
    case Kind::DeleteSandbox:
        FUZZ_CHECK(!route.id.isEmpty() && route.parts.size() >= 2 && route.id == route.parts.at(1));
        break;
    case Kind::ExportHar:
        for (const QString &id : route.ids)
            FUZZ_CHECK(!id.isEmpty() && id == id.trimmed());
        break;
    case Kind::ListFlows:
    case Kind::ClearFlows:
    case Kind::ListRuns:
    case Kind::ListSandboxes:
    case Kind::Events:
    case Kind::ImportHar:
        FUZZ_CHECK(route.parts.size() == 1 && route.id.isEmpty());
        break;
    case Kind::Breakpoints:
        FUZZ_CHECK(route.parts.size() <= 2);
        break;
    case Kind::Stats: // GET /loopscope/v1 itself
        FUZZ_CHECK(route.parts.isEmpty() && route.id.isEmpty());
        break;
    case Kind::Error:
        break;
    }
    return 0;
}
