#pragma once

#include "record/flowquery.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace loopscope {

// A control API request (/loopscope/v1/...) parsed: which route, the ids in its path and its
// query parameters — or the error it is answered with (400 bad parameter, 404 unknown route,
// 405 wrong method). Pure, so ControlApi stays about answering and the parsing can be fuzzed.
struct ControlRoute {
    enum class Kind {
        Error,
        Breakpoints, // /breakpoints, /paused[/id]: BreakpointsApi takes `parts`
        ListFlows,
        ClearFlows,
        GetFlow,
        ReplayFlow,
        Events,
        ListRuns,
        GetRun,
        ListSandboxes,
        DeleteSandbox,
        ExportHar,
        ImportHar,
        Stats, // GET /loopscope/v1 itself
    };
    Kind kind = Kind::Error;
    QStringList parts; // path segments below /loopscope/v1
    QString id;        // the flow, run or sandbox of the path
    FlowFilter filter; // ListFlows; ListRuns uses filter.limit
    QStringList ids;   // ExportHar: ids=a,b,c (trimmed, none empty)
    QString run;       // ExportHar: run=
    // Kind::Error: the answer (type invalid_request_error).
    int status = 0;
    QString message;
    QString code;
    QString param;

    static constexpr int kMaxLimit = 1000;
    // `path` decoded, starting with /loopscope/v1; `query` raw, without '?'.
    static ControlRoute parse(const QByteArray &method, const QString &path,
                              const QByteArray &query);
};

} // namespace loopscope
