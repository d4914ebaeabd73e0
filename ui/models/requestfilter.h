#pragma once

#include "models/requestrecord.h"

#include <QString>

namespace loopscope {

// The one predicate behind the Requests panel's search box and filters. Kept GUI-free so it is
// tested on its own and any other front end (a web UI, the headless log) can reuse it.
struct RequestFilter {
    enum class Status { Any, Running, Completed, Failed };
    enum class Code { Any, WithCode, WithoutCode };

    QString text; // case-insensitive; matched against id, model, api, path, session, code
    QString api;  // "" = any, else exact ("responses", "chat_completions", "other")
    Status status = Status::Any;
    Code code = Code::Any;
    QString sessionId; // "" = any

    bool isEmpty() const;
    bool matches(const RequestRecord &record) const;

    friend bool operator==(const RequestFilter &, const RequestFilter &) = default;
};

} // namespace loopscope
