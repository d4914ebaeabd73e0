#pragma once

#include <QJsonValue>
#include <QString>

// Small text helpers every panel shares, so the window writes a number, a duration or a key
// the same way everywhere (issue 13: "1 requests", durations written three ways, identities).
// In core/inspect, beside the credential policy it masks keys with, so the runtime's log lines
// (core/runtime) write them the same way too.
namespace loopscope::textformat {

// One format for every duration in the window: "0.4 ms", "12 ms", "1.23 s", "5 s", "12.3 s",
// "4 min 05 s", "1 h 02 min". Negative (unknown) → "…".
QString formatDuration(double ms);

// "1 request", "2 requests", "0 requests". `word` is the singular; `pluralWord` when the
// plural is not word + "s" (e.g. plural(n, "sandbox", "sandboxes")).
QString plural(qint64 n, const QString &word, const QString &pluralWord = {});

// A caller's key the way the headless log writes it: its last 4 characters after an ellipsis
// ("…a1b2"), never more; a value that is already masked is kept, an empty one or the
// anonymous identity (no key sent) reads "no key".
QString maskedIdentity(const QString &keyOrMasked);

// A JSON value as a person reads it: objects and arrays indented, a string as itself (no
// quotes), numbers and booleans as written, null/undefined as "".
QString prettyJson(const QJsonValue &value);

} // namespace loopscope::textformat
