/* placeholder so the library has a source until the matcher lands */
int sn_templates_placeholder_(void);
int sn_templates_placeholder_(void) { return 0; }
