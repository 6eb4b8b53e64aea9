package tui

// A sessionMsg is an async result that belongs to one session view: the
// root hands it to the view with its id (Model.viewByID), which routes
// it to the pane that owns it (sessionView.Update).
type sessionMsg interface{ sessionID() int }

func (m searchDoneMsg) sessionID() int   { return m.session }
func (m scanDoneMsg) sessionID() int     { return m.session }
func (m detailLoadedMsg) sessionID() int { return m.session }
func (m previewMsg) sessionID() int      { return m.session }
func (m templatesMsg) sessionID() int    { return m.session }
func (m holdOpenedMsg) sessionID() int   { return m.session }
func (m holdEventMsg) sessionID() int    { return m.session }
func (m editorDoneMsg) sessionID() int   { return m.session }
