#include "models/requestfilter.h"

namespace loopscope {

namespace {

bool containsText(const RequestRecord &r, const QString &needle) {
    const auto has = [&needle](const QString &haystack) {
        return haystack.contains(needle, Qt::CaseInsensitive);
    };
    if (has(r.id) || has(r.model) || has(r.api) || has(r.path) || has(r.sessionId) ||
        has(r.identity) || has(r.statusText()) || has(r.failureMessage))
        return true;
    for (const CodeRunRecord &run : r.codeRuns) {
        if (has(run.code) || has(run.stdoutText) || has(run.stderrText) || has(run.errorName) ||
            has(run.containerId))
            return true;
    }
    return false;
}

} // namespace

bool RequestFilter::isEmpty() const {
    return text.trimmed().isEmpty() && api.isEmpty() && status == Status::Any &&
           code == Code::Any && sessionId.isEmpty();
}

bool RequestFilter::matches(const RequestRecord &record) const {
    if (!api.isEmpty() && record.api != api)
        return false;
    switch (status) {
    case Status::Any:
        break;
    case Status::Running:
        if (record.state != RequestState::Running)
            return false;
        break;
    case Status::Completed:
        if (record.state != RequestState::Completed)
            return false;
        break;
    case Status::Failed:
        if (record.state != RequestState::Failed)
            return false;
        break;
    }
    if (code == Code::WithCode && !record.hasCode())
        return false;
    if (code == Code::WithoutCode && record.hasCode())
        return false;
    if (!sessionId.isEmpty() && record.sessionId != sessionId)
        return false;
    const QString needle = text.trimmed();
    return needle.isEmpty() || containsText(record, needle);
}

} // namespace loopscope
