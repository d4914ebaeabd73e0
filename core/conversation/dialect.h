#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringView>

namespace loopscope {

// The three wire formats Loopscope meets (dialects.md).
enum class Dialect { Responses, ChatCompletions, Messages };

// A request path's api name, as flows carry it: "responses", "chat_completions", "messages",
// "models", "containers" or "other" ("/v1/" optional).
QString apiOfPath(const QString &path);

// The dialect of a flow's api name ("responses", "chat_completions", "messages"); any other
// name reads as Responses, the proxy's default surface.
Dialect dialectOfApi(QStringView api);

// The final answer a client stream (decoded SSE events) adds up to, by its dialect's codec. The
// recorder, the window and HAR all ask this, so they cannot disagree about what a flow said.
QJsonObject responseFromEvents(Dialect dialect, const QJsonArray &events);

} // namespace loopscope
