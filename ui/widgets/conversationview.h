#pragma once

#include "models/conversation.h"

#include <QJsonObject>
#include <QSet>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QTextBrowser;
class QTextCursor;
class QToolButton;

namespace loopscope {

// The default detail view of a step: a flow's conversation, readable. Per iteration what was
// sent to the model (only what is new since the previous iteration unless "Show all sent
// items"), the model's reply with tool calls decoded and code highlighted as Python, the exact
// output fed back, and the final answer. One read-only rich-text document (selectable,
// searchable), coloured from the palette.
class ConversationView : public QWidget {
    Q_OBJECT
public:
    explicit ConversationView(QWidget *parent = nullptr);

    const Conversation &conversation() const { return m_conversation; }
    QJsonObject flow() const { return m_flow; }
    // The shown iteration (hops' `iteration`), -1 for every iteration.
    int currentIteration() const;
    bool showAllSent() const;
    QString text() const; // the shown text, as plain text (tests, copy)

    QTextBrowser *textView() const { return m_text; }
    QComboBox *iterationBox() const { return m_iterations; }
    QCheckBox *showAllSentBox() const { return m_showAll; }
    QToolButton *compareButton() const { return m_compare; }

public slots:
    // The full flow (spec shape: summary + hops); an empty object clears the view. Keeps the
    // shown iteration when the same flow is reloaded (live updates).
    void setFlow(const QJsonObject &flow);
    // The hops' 0-based `iteration` (a Loop step's iteration); -1 or an unknown one shows
    // every iteration.
    void showIteration(int iteration);
    void setShowAllSent(bool all);

signals:
    // "Compare with previous" on iteration `right`: the lead's window may open its own diff;
    // by default the view opens DiffView::openIterations itself (see setOpensDiffItself).
    void compareIterationsRequested(const QJsonObject &flow, int left, int right);

public:
    void setOpensDiffItself(bool opens) { m_opensDiff = opens; }

protected:
    void changeEvent(QEvent *event) override; // re-renders on a palette (theme) change

private:
    void render();
    void renderIteration(QTextCursor &cursor, int index);
    void renderEntries(QTextCursor &cursor, const QList<Conversation::Entry> &entries);
    void renderEntry(QTextCursor &cursor, const Conversation::Entry &entry);
    void heading(QTextCursor &cursor, const QString &text, int level);
    // Long blocks (an agent's system prompt, a big tool result) show their first lines and a
    // link that expands them; what was expanded stays so for the flow.
    static QString collapseKey(const Conversation::Entry &entry);
    void updateControls();

    Conversation m_conversation;
    QJsonObject m_flow;
    int m_iteration = -1;
    bool m_opensDiff = true;
    bool m_rendering = false;
    QSet<QString> m_expanded; // collapseKey()s the reader opened
    QComboBox *m_iterations;
    QCheckBox *m_showAll;
    QToolButton *m_compare;
    QTextBrowser *m_text;
};

} // namespace loopscope
