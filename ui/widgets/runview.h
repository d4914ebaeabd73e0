#pragma once

#include "models/runconversation.h"

#include <QSet>
#include <QWidget>

class QLabel;
class QTextBrowser;
class QTextCursor;

namespace loopscope {

class FlowQueryClient;

// A whole agent run read as one conversation (RunConversation): per turn only what it added,
// the model's reply with each tool call and its result as one step, reasoning shown, tokens
// (cache reads and writes apart) and cost per turn and for the run. System prompts, tool lists
// and long blocks are collapsed to a line with their size until opened. One read-only
// rich-text document, selectable and searchable (Ctrl+F).
class RunView : public QWidget {
    Q_OBJECT
public:
    explicit RunView(QWidget *parent = nullptr);

    // Reads the run's flows through `client` off the GUI thread, one at a time, and shows
    // them: the first kFirstTurns as soon as they are read, then the whole run. A newer call
    // wins over one still reading.
    void showRun(FlowQueryClient *client, const QString &runId);
    static constexpr int kFirstTurns = 10;
    void setConversation(const QString &runId, const RunConversation &run);
    void clear();

    QString runId() const { return m_runId; }
    const RunConversation &conversation() const { return m_run; }
    QString text() const; // as shown, plain (tests)
    QLabel *totalsLabel() const { return m_totals; }
    QTextBrowser *textView() const { return m_text; }
    // Opens every collapsed block (tests, the benchmark).
    void expandAll();
    // Scrolls the first "Model reply" near the top, the end of the turn's prompt above it.
    void scrollToFirstReply();

    // One line of totals: "4 turns · in 102 · out 77 · cache read … · $0.0123 · 1.2 s".
    static QString totalsText(const RunConversation::Totals &totals);
    static QString tokensText(const RunConversation::Tokens &tokens);

signals:
    void firstTurnsShown(const QString &runId); // the first kFirstTurns turns are on screen
    void loaded(const QString &runId);          // the whole run is

protected:
    void changeEvent(QEvent *event) override; // re-renders on a palette (theme) change

private:
    void render();
    void renderTurn(QTextCursor &cursor, int index);
    void renderStep(QTextCursor &cursor, const RunConversation::Step &step, const QString &key);
    void renderBody(QTextCursor &cursor, const Conversation::Entry &entry, bool collapsed,
                    const QString &key);
    void line(QTextCursor &cursor, const QString &text, const QColor &color, bool bold, int indent,
              int topMargin = 0);

    QString m_runId;
    RunConversation m_run;
    quint64 m_generation = 0;
    bool m_rendering = false;
    bool m_expandAll = false;
    QSet<QString> m_expanded; // keys of blocks the reader opened
    QLabel *m_totals;
    QTextBrowser *m_text;
};

} // namespace loopscope
