#pragma once

#include "conversation/conversationrequest.h"
#include "conversation/conversationresponse.h"
#include "conversation/dialectkind.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringView>

namespace loopscope {

// A request path's api name, as flows carry it: "responses", "chat_completions", "messages",
// "models", "containers" or "other" ("/v1/" optional).
QString apiOfPath(const QString &path);

// The dialect of a flow's api name ("responses", "chat_completions", "messages"); any other
// name reads as Responses, the proxy's default surface.
Dialect dialectOfApi(QStringView api);

// The final answer a client stream (decoded SSE events) adds up to, by its dialect's codec. The
// recorder, the window and HAR all ask this, so they cannot disagree about what a flow said.
QJsonObject responseFromEvents(Dialect dialect, const QJsonArray &events);

// A request or response body decoded by its dialect's codec into the conversation model.
ConversationRequest decodeRequest(Dialect dialect, const QJsonObject &body);
ConversationResponse decodeResponse(Dialect dialect, const QJsonObject &body);
// The model written back in a dialect by its codec: decode → encode gives the same JSON.
QJsonObject encodeRequest(Dialect dialect, const ConversationRequest &request);
QJsonObject encodeResponse(Dialect dialect, const ConversationResponse &response);

// The dialect a body's shape says, for bodies that come without a path (hand-made flows, HAR
// entries): Chat's `messages` with OpenAI roles or `choices`, Anthropic's `messages` beside
// `system` or with Anthropic blocks, or a `"type":"message"` answer, else Responses.
Dialect dialectOfBody(const QJsonObject &body);
// A flow's body read in its api's dialect (dialectOfApi); a flow on the default surface
// ("responses", "other", none) in the dialect its body's shape says.
Dialect dialectOf(Dialect flowDialect, const QJsonObject &body);

} // namespace loopscope
