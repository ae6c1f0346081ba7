int sn_integrate_placeholder_(void); int sn_integrate_placeholder_(void) { return 0; }
